use toolnexus::tool;

/// Does one thing, under a name no provider accepts.
#[tool]
fn this_function_name_is_far_too_long_for_any_provider_to_accept_as_a_tool() {}

fn main() {}
