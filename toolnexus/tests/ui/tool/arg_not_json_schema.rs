use toolnexus::tool;

#[derive(serde::Deserialize)]
struct Point {
    x: i32,
}

/// Plot a point.
#[tool]
fn plot(label: String, point: Point) -> String {
    format!("{label} {}", point.x)
}

fn main() {}
