#[derive(toolnexus::Form)]
enum Seat {
    Aisle,
    Numbered(u8),
}

fn main() {}
