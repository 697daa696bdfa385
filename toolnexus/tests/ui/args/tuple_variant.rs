use toolnexus::Args;

#[derive(Args)]
#[serde(tag = "t", content = "c")]
enum Move {
    To(i32, i32),
}

fn main() {}
