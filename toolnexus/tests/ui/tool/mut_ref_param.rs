use toolnexus::tool;

/// Append to a list.
#[tool]
fn append(list: &mut Vec<String>, item: String) -> usize {
    list.push(item);
    list.len()
}

fn main() {}
