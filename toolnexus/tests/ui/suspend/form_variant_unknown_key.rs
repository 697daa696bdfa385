#[derive(toolnexus::Form)]
enum Seat {
    #[form(label = "Aisle")]
    Aisle,
    #[form(title = "")]
    Window,
}

fn main() {}
