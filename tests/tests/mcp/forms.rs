//! Issue 35: forms that say everything elicitation can (SEP-1034 defaults, SEP-1330 titled
//! and multi-select options), from `#[derive(Form)]` to the client's `requestedSchema`, and the
//! answer back into the typed form.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use toolnexus::mcp::McpService;
use toolnexus::{Form, Suspension, Toolkit, ask, tool};
use toolnexus_tests::mcp_fixtures::{Script, accept, http_client};

#[derive(Form, serde::Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
enum Meal {
    #[form(title = "Vegetarian")]
    Veg,
    Fish,
}

#[derive(Form, serde::Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
enum Seat {
    Aisle,
    Window,
}

/// The order.
#[derive(Form, serde::Deserialize, Debug)]
struct Order {
    #[form(default = 2)]
    seats: u8,
    #[form(default = "window")]
    seat: Seat,
    meal: Meal,
    extras: Vec<Meal>,
    sides: Vec<Seat>,
}

/// Orders a meal.
#[tool]
fn place_order(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let o = ask!(ctx, input "Your order?", schema = Order);
    Ok(format!(
        "{} seats, {:?}, {:?}, extras {:?}, sides {:?}",
        o.seats, o.seat, o.meal, o.extras, o.sides
    ))
}

#[tokio::test]
async fn defaults_titled_and_multi_select_options_reach_the_client_and_the_answer_comes_back_typed()
{
    let kit = Toolkit::builder().tool(PlaceOrder).build().unwrap();
    let http = McpService::new(kit)
        .serve_http("127.0.0.1:0")
        .await
        .unwrap();
    let script = Script::new();
    script.reply(accept(json!({
        "seats": 3, "seat": "aisle", "meal": "veg", "extras": ["fish", "veg"], "sides": []
    })));
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(http.url()),
    );
    let client = script.clone().serve(transport).await.unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("place_order"))
        .await
        .unwrap();
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert_eq!(
        text,
        json!("3 seats, Aisle, Veg, extras [Fish, Veg], sides []")
    );
    let seen = script.seen();
    assert_eq!(seen.len(), 1);
    let props: &Value = &seen[0]["requestedSchema"]["properties"];
    assert_eq!(props["seats"], json!({"type": "integer", "default": 2}));
    assert_eq!(
        props["seat"],
        json!({"type": "string", "enum": ["aisle", "window"], "default": "window"})
    );
    assert_eq!(
        props["meal"],
        json!({"type": "string", "oneOf": [{"const": "veg", "title": "Vegetarian"}, {"const": "fish", "title": "fish"}]})
    );
    assert_eq!(
        props["extras"],
        json!({"type": "array", "items": {"anyOf": [{"const": "veg", "title": "Vegetarian"}, {"const": "fish", "title": "fish"}]}})
    );
    assert_eq!(
        props["sides"],
        json!({"type": "array", "items": {"type": "string", "enum": ["aisle", "window"]}})
    );
    client.cancel().await.unwrap();
    http.shutdown();
}
