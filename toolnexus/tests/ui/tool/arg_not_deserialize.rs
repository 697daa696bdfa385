use toolnexus::tool;

#[derive(schemars::JsonSchema)]
struct Point {
    x: i32,
}

/// Plot a point.
#[tool]
fn plot(label: String, point: Point) -> String {
    format!("{label} {}", point.x)
}

fn main() {}
