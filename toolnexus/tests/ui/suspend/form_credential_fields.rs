#[derive(toolnexus::Form, serde::Deserialize)]
struct Login {
    user: String,
    password: String,
    api_key: String,
    card_number: String,
    user_pin: u16,
    #[serde(rename = "accessToken")]
    access: String,
}

fn main() {}
