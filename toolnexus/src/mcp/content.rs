//! A tool result's content both ways (CONTRACT section 8): the `output` text and each
//! [`ContentPart`] as the matching MCP content item, bytes intact, and MCP content items back
//! into the same parts.
//!
//! | part | MCP content item |
//! |---|---|
//! | `output` | `text` (the first item; left out when empty and parts follow) |
//! | `image`, `audio` with `data` | `image`, `audio` (`data`, `mimeType`) |
//! | `resource` ([`ContentPart::resource_text`], [`ContentPart::resource_blob`]) | `resource` (`uri` = `url`, `text` or `blob` = `data`) |
//! | `resource_link` ([`ContentPart::resource_link`]) | `resource_link` (`uri` = `url`, `name`, ...) |
//! | `file` with `data` | `resource` with a `blob` (`uri`: the part's `uri`, else its `name`) |
//! | any part with a `url` only | `resource_link` to it |
//!
//! A part's `annotations` and `_meta` keys travel as the item's. Consumed back, every item
//! but text becomes the part of its own kind (an embedded resource is a `resource` part,
//! whatever part it was served from); the text items make the `output`.

use rmcp::model::ContentBlock;
use serde_json::{Map, Value, json};

use crate::result::{ContentPart, PART_AUDIO, PART_IMAGE, PART_RESOURCE, PART_RESOURCE_LINK};

/// Keys of a part that travel as the MCP item's own.
const ITEM_KEYS: [&str; 2] = ["annotations", "_meta"];

/// The content items of a result with `output` and `parts`.
pub(crate) fn to_mcp(output: &str, parts: &[ContentPart]) -> Vec<ContentBlock> {
    let mut items = Vec::with_capacity(parts.len() + 1);
    if !output.is_empty() || parts.is_empty() {
        items.push(ContentBlock::text(output.to_owned()));
    }
    items.extend(parts.iter().map(|p| {
        serde_json::from_value(part_item(p))
            .unwrap_or_else(|_| ContentBlock::text(format!("[{} part]", p.kind)))
    }));
    items
}

/// One part as the JSON of its MCP content item.
fn part_item(p: &ContentPart) -> Value {
    let mut item = Map::new();
    let mime = p.mime_type.clone().map(Value::String);
    let extra_str = |key: &str| p.extra.get(key).and_then(Value::as_str).map(str::to_owned);
    match (p.kind.as_str(), &p.data, &p.url) {
        (kind @ (PART_IMAGE | PART_AUDIO), Some(data), _) => {
            item.insert("type".into(), json!(kind));
            item.insert("data".into(), json!(data));
            item.insert("mimeType".into(), mime.unwrap_or(json!("")));
        }
        (PART_RESOURCE, data, url) => {
            let mut resource = Map::new();
            resource.insert("uri".into(), json!(url.clone().unwrap_or_default()));
            if let Some(mime) = mime {
                resource.insert("mimeType".into(), mime);
            }
            match (data, extra_str("text")) {
                (Some(blob), _) => resource.insert("blob".into(), json!(blob)),
                (None, text) => resource.insert("text".into(), json!(text.unwrap_or_default())),
            };
            item.insert("type".into(), json!("resource"));
            item.insert("resource".into(), Value::Object(resource));
        }
        (_, Some(blob), _) => {
            let uri = extra_str("uri")
                .or_else(|| extra_str("name"))
                .unwrap_or_else(|| p.kind.clone());
            let mut resource = Map::new();
            resource.insert("uri".into(), json!(uri));
            if let Some(mime) = mime {
                resource.insert("mimeType".into(), mime);
            }
            resource.insert("blob".into(), json!(blob));
            item.insert("type".into(), json!("resource"));
            item.insert("resource".into(), Value::Object(resource));
        }
        (kind, None, url) => {
            item.insert("type".into(), json!("resource_link"));
            item.insert("uri".into(), json!(url.clone().unwrap_or_default()));
            let name = extra_str("name").unwrap_or_else(|| kind.to_owned());
            item.insert("name".into(), json!(name));
            if let Some(mime) = mime {
                item.insert("mimeType".into(), mime);
            }
            if kind == PART_RESOURCE_LINK {
                for (k, v) in &p.extra {
                    if k != "name" && !ITEM_KEYS.contains(&k.as_str()) {
                        item.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    for key in ITEM_KEYS {
        if let Some(v) = p.extra.get(key) {
            item.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(item)
}

/// MCP content items back into the `output` text (the text items, one per line) and the
/// parts (every other item, in order).
pub(crate) fn from_mcp(content: &[ContentBlock]) -> (Option<String>, Vec<ContentPart>) {
    let mut texts = Vec::new();
    let mut parts = Vec::new();
    for block in content {
        if let ContentBlock::Text(t) = block {
            texts.push(t.text.clone());
            continue;
        }
        if let Ok(Value::Object(item)) = serde_json::to_value(block)
            && let Some(part) = item_part(item)
        {
            parts.push(part);
        }
    }
    let output = (!texts.is_empty()).then(|| texts.join("\n"));
    (output, parts)
}

fn item_part(mut item: Map<String, Value>) -> Option<ContentPart> {
    let Value::String(kind) = item.remove("type")? else {
        return None;
    };
    let take_str = |item: &mut Map<String, Value>, key: &str| match item.remove(key) {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            item.insert(key.to_owned(), other);
            None
        }
        None => None,
    };
    let mut part = match kind.as_str() {
        PART_IMAGE | PART_AUDIO => {
            let data = take_str(&mut item, "data")?;
            let mime = take_str(&mut item, "mimeType").unwrap_or_default();
            ContentPart::inline(kind, data, mime)
        }
        "resource" => {
            let Some(Value::Object(mut resource)) = item.remove("resource") else {
                return None;
            };
            let uri = take_str(&mut resource, "uri").unwrap_or_default();
            let mime = take_str(&mut resource, "mimeType");
            let mut part = match (
                take_str(&mut resource, "blob"),
                take_str(&mut resource, "text"),
            ) {
                (Some(blob), _) => ContentPart::resource_blob(uri, blob, String::new()),
                (None, text) => ContentPart::resource_text(uri, text.unwrap_or_default()),
            };
            part.mime_type = mime;
            if let Some(meta) = resource.remove("_meta") {
                part.extra.insert("resourceMeta".to_owned(), meta);
            }
            part
        }
        PART_RESOURCE_LINK => {
            let uri = take_str(&mut item, "uri").unwrap_or_default();
            let mime = take_str(&mut item, "mimeType");
            let mut part = ContentPart::url(PART_RESOURCE_LINK, uri);
            part.mime_type = mime;
            part
        }
        _ => return None,
    };
    // what is left (a link's name, the item's annotations and _meta) travels as it was
    for (k, v) in item {
        part.extra.insert(k, v);
    }
    Some(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(output: &str, parts: &[ContentPart]) -> (Option<String>, Vec<ContentPart>) {
        from_mcp(&to_mcp(output, parts))
    }

    #[test]
    fn image_and_audio_keep_their_bytes_both_ways() {
        let parts = vec![
            ContentPart::image("iVBORw0KGgo=", "image/png"),
            ContentPart::audio("UklGRiUAAAA=", "audio/wav"),
        ];
        let items = serde_json::to_value(to_mcp("two", &parts)).unwrap();
        assert_eq!(
            items,
            json!([
                {"type": "text", "text": "two"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRiUAAAA=", "mimeType": "audio/wav"}
            ])
        );
        assert_eq!(round_trip("two", &parts), (Some("two".to_owned()), parts));
    }

    #[test]
    fn embedded_resources_and_links_come_back_as_the_same_parts() {
        let parts = vec![
            ContentPart::resource_text("test://a", "hello").with_mime_type("text/plain"),
            ContentPart::resource_blob("test://b", "AAEC", "application/octet-stream"),
            ContentPart::resource_link("test://c", "c.txt")
                .with_extra("description", json!("the third")),
        ];
        let items = serde_json::to_value(to_mcp("", &parts)).unwrap();
        assert_eq!(
            items,
            json!([
                {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "test://b", "mimeType": "application/octet-stream", "blob": "AAEC"}},
                {"type": "resource_link", "uri": "test://c", "name": "c.txt", "description": "the third"}
            ])
        );
        assert_eq!(round_trip("", &parts), (None, parts));
    }

    #[test]
    fn a_file_travels_as_an_embedded_blob_and_comes_back_as_a_resource() {
        let file = ContentPart::file("JVBERi0=", "application/pdf")
            .with_extra("name", json!("report.pdf"));
        let items = serde_json::to_value(to_mcp("the report", &[file])).unwrap();
        assert_eq!(
            items[1],
            json!({"type": "resource", "resource": {"uri": "report.pdf", "mimeType": "application/pdf", "blob": "JVBERi0="}})
        );
        let (_, parts) = round_trip(
            "the report",
            &[ContentPart::file("JVBERi0=", "application/pdf")],
        );
        assert_eq!(
            parts,
            vec![ContentPart::resource_blob(
                "file",
                "JVBERi0=",
                "application/pdf"
            )]
        );
    }

    #[test]
    fn a_url_part_is_a_resource_link_and_annotations_travel_with_the_item() {
        let part = ContentPart::url(PART_IMAGE, "https://example.com/chart.png")
            .with_mime_type("image/png")
            .with_extra("annotations", json!({"audience": ["user"]}));
        let items = serde_json::to_value(to_mcp("a chart", &[part])).unwrap();
        assert_eq!(
            items[1],
            json!({"type": "resource_link", "uri": "https://example.com/chart.png", "name": "image", "mimeType": "image/png", "annotations": {"audience": ["user"]}})
        );
    }

    #[test]
    fn empty_output_alone_is_still_one_text_item() {
        let items = serde_json::to_value(to_mcp("", &[])).unwrap();
        assert_eq!(items, json!([{"type": "text", "text": ""}]));
    }
}
