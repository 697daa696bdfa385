// A form that fails to derive still implements `Form`: its `schema = T` use gives no second
// error (one mistake, one error).
#[derive(toolnexus::Form, serde::Deserialize)]
struct Login {
    user: String,
    password: String,
}

fn main() {
    let _ = toolnexus::suspend!(input "Log in", schema = Login);
}
