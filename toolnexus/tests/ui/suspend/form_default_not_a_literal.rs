fn nights() -> u8 {
    2
}

#[derive(toolnexus::Form)]
struct Trip {
    #[form(default = nights())]
    nights: u8,
    #[form(default = b"x")]
    city: String,
    #[form(default = 1, default = 2)]
    seats: u8,
}

fn main() {}
