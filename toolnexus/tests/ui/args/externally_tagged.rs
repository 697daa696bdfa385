use toolnexus::Args;

#[derive(Args)]
enum Shape {
    Circle { radius: f64 },
    Point,
}

fn main() {}
