//! Removing passwords from store locations before they are printed or
//! recorded, by parsing them as libpq does (the grammar the connection
//! itself uses), never by searching for substrings:
//!
//! - a URI `postgres[ql]://[user[:password]@][hosts][/db][?key=value&...]`:
//!   the user part runs to the first `@` before any `/` (so a password may
//!   hold `?`, `#`, `:`), and `password=` in the query is a password too;
//! - a key/value string `host=h password='it''s' ...` with libpq's quoting.
//!
//! When a URI cannot be read unambiguously (an `@` left over after the user
//! part, as in `postgres://bob:pa/ss@h/db`, which libpq reads as host `bob`
//! and database `ss@h/db`), everything after the scheme is hidden: the user
//! certainly meant a password to be in there.

const HIDDEN: &str = "***";
const SCHEMES: [&str; 2] = ["postgresql://", "postgres://"];

/// `text` with every password replaced by `***`. Text that is neither a
/// PostgreSQL URI nor a key/value string with a password comes back as is.
pub fn redact(text: &str) -> String {
    if let Some(scheme) = SCHEMES.iter().find(|s| text.starts_with(*s)) {
        return redact_uri(scheme, &text[scheme.len()..]);
    }
    match conninfo(text) {
        Ok(pairs) => {
            let mut out = String::with_capacity(text.len());
            let mut at = 0;
            for p in pairs {
                let value = &text[p.value.clone()];
                let replacement = if p.key == "password" {
                    HIDDEN.to_string()
                } else if SCHEMES.iter().any(|s| value.starts_with(s)) {
                    // `--store=postgres://…` on a command line.
                    redact(value)
                } else {
                    continue;
                };
                out.push_str(&text[at..p.value.start]);
                out.push_str(&replacement);
                at = p.value.end;
            }
            out.push_str(&text[at..]);
            out
        }
        // Not a key/value string libpq would accept; if it names a password
        // key anyway, its value cannot be located: hide all of it.
        Err(()) if text.contains("password") && text.contains('=') => HIDDEN.into(),
        Err(()) => text.to_string(),
    }
}

/// The keywords of a libpq connection string that the PostgreSQL client
/// understands; a string made only of these is a connection string.
const KEYWORDS: [&str; 17] = [
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "options",
    "application_name",
    "connect_timeout",
    "keepalives",
    "keepalives_idle",
    "sslmode",
    "sslnegotiation",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
    "tcp_user_timeout",
];

/// True for a libpq key/value connection string (`host=h dbname=x`): it
/// parses as one and uses only libpq's keywords.
pub fn is_conninfo(text: &str) -> bool {
    conninfo(text).is_ok_and(|pairs| pairs.iter().all(|p| KEYWORDS.contains(&p.key.as_str())))
}

fn redact_uri(scheme: &str, rest: &str) -> String {
    let hide_all = || format!("{scheme}{HIDDEN}");
    // libpq: the user part ends at the first '@' before any '/'.
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (user_part, after) = match rest[..authority_end].find('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    if after.contains('@') {
        return hide_all();
    }
    let mut out = String::from(scheme);
    if let Some(user) = user_part {
        match user.find(':') {
            Some(colon) => {
                out.push_str(&user[..colon]);
                out.push(':');
                out.push_str(HIDDEN);
            }
            None => out.push_str(user),
        }
        out.push('@');
    }
    // The query: key=value pairs separated by '&', keys percent-encoded.
    match after.find('?') {
        None => out.push_str(after),
        Some(q) => {
            out.push_str(&after[..=q]);
            let query = &after[q + 1..];
            let mut first = true;
            for pair in query.split('&') {
                if !first {
                    out.push('&');
                }
                first = false;
                match pair.split_once('=') {
                    Some((key, _)) if percent_decode(key).as_deref() == Some("password") => {
                        out.push_str(key);
                        out.push('=');
                        out.push_str(HIDDEN);
                    }
                    Some((key, _)) if percent_decode(key).is_none() => return hide_all(),
                    _ => out.push_str(pair),
                }
            }
        }
    }
    out
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// One `key=value` of a libpq connection string; `value` is the byte range
/// of the value as written (quotes included).
#[derive(Debug, PartialEq)]
struct Pair {
    key: String,
    value: std::ops::Range<usize>,
}

/// Parses a libpq key/value connection string: keys up to whitespace or
/// `=`, values either bare (up to whitespace, `\` escapes the next
/// character) or in single quotes (`\` escapes). Fails like libpq on a
/// missing `=` or an unterminated quote, or when there is no pair at all.
fn conninfo(text: &str) -> Result<Vec<Pair>, ()> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut pairs = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i == b.len() {
            break;
        }
        let key_start = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &text[key_start..i];
        skip_ws(&mut i);
        if key.is_empty() || i == b.len() || b[i] != b'=' {
            return Err(());
        }
        i += 1;
        skip_ws(&mut i);
        let value_start = i;
        if i < b.len() && b[i] == b'\'' {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(()),
                    Some(b'\\') => i += 2,
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
        }
        let end = i.min(b.len());
        pairs.push(Pair {
            key: key.to_string(),
            value: value_start..end,
        });
        i = end;
    }
    if pairs.is_empty() {
        Err(())
    } else {
        Ok(pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_lose_their_passwords() {
        for (input, expected) in [
            (
                "postgres://bob:s3cr@t@db.example:5432/x?sslmode=disable",
                // libpq: the user part ends at the first '@'; the rest holds
                // another '@', so nothing can be shown safely.
                "postgres://***",
            ),
            ("postgres://bob@h/db", "postgres://bob@h/db"),
            ("postgres://bob:pw@h/db", "postgres://bob:***@h/db"),
            (
                "postgres://bob:S3c?r#e:t@h:1/db",
                "postgres://bob:***@h:1/db",
            ),
            ("postgres://bob:S3cr/etPW3@127.0.0.1:1/db", "postgres://***"),
            ("postgres://bob:12?x@h/db", "postgres://bob:***@h/db"),
            (
                "postgresql://h/db?user=a&password=zz&x=1",
                "postgresql://h/db?user=a&password=***&x=1",
            ),
            (
                "postgresql://h/db?user=a&pass%77ord=zz",
                "postgresql://h/db?user=a&pass%77ord=***",
            ),
            ("postgresql://h/db?%zz=1", "postgresql://***"),
            ("postgres://", "postgres://"),
        ] {
            assert_eq!(redact(input), expected, "{input}");
        }
    }

    #[test]
    fn key_value_strings_lose_their_passwords() {
        for (input, expected) in [
            ("host=h password=zz user=a", "host=h password=*** user=a"),
            (
                "host=h password = 'a b\\' c' user=a",
                "host=h password = *** user=a",
            ),
            ("password=a\\ b", "password=***"),
            ("host=h password='open", "***"),
            (
                "--store=postgres://u:p@h/db",
                "--store=postgres://u:***@h/db",
            ),
            ("echo hello", "echo hello"),
            ("a=b", "a=b"),
            ("", ""),
            ("run", "run"),
        ] {
            assert_eq!(redact(input), expected, "{input}");
        }
    }

    #[test]
    fn connection_strings_are_recognised() {
        assert!(is_conninfo("host=h port=1 password=x"));
        assert!(is_conninfo("dbname = 'my db'"));
        assert!(!is_conninfo("results.sqlite3"));
        assert!(!is_conninfo("dir/a=b.sqlite"));
        assert!(!is_conninfo("host=h 'open"));
    }

    #[test]
    fn no_password_survives_random_placement() {
        // Property: a password made of URL-hostile characters, put where
        // libpq would read it, never appears in the output.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let alphabet: Vec<char> = "aZ9/?#:@&=%' \\".chars().collect();
        for _ in 0..2000 {
            let len = rng.random_range(4..12);
            let secret: String = std::iter::once('Q')
                .chain((0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]))
                .chain(std::iter::once('Q'))
                .collect();
            let uri = format!("postgres://bob:{secret}@127.0.0.1:5432/db");
            let out = redact(&uri);
            assert!(!out.contains(&secret), "{uri} -> {out}");
            let quoted = secret.replace('\\', "\\\\").replace('\'', "\\'");
            let kv = format!("host=h password='{quoted}' dbname=x");
            let out = redact(&kv);
            assert!(
                !out.contains(&secret) && !out.contains(&quoted),
                "{kv} -> {out}"
            );
        }
    }
}
