//! JSON pointers (RFC 6901) and the URI-fragment form a `$ref` writes them in.

/// Escapes a JSON pointer token (RFC 6901).
pub(super) fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

pub(super) fn unescape_pointer(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Decodes `%XX` escapes of a URI fragment (invalid escapes are kept as they are).
pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}
