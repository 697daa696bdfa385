use toolnexus::Args;

#[derive(Args)]
struct Query {
    #[arg(descripton = "typo")]
    text: String,
}

fn main() {}
