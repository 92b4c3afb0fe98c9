//! PostgreSQL connection strings: which text is one, whether the driver
//! accepts it (and if not, why, in words that never quote a password), and
//! the one redaction of passwords before anything is printed or recorded.
//!
//! The driver's own parser (`postgres::Config`, which reads both libpq
//! forms) decides what is accepted. Redaction parses the text with the same
//! grammar, to know where each password value lies:
//!
//! - a URI `postgres[ql]://[user[:password]@][hosts][/db][?key=value&...]`:
//!   the user part runs to the first `@` before any `/` (so a password may
//!   hold `?`, `#`, `:`), and a query key that is `password` in any case
//!   (percent-decoded) holds a password too;
//! - a key/value string `host=h password='it''s' ...` with libpq's quoting,
//!   where any key that is `password` in any case holds one.
//!
//! Where the driver accepts the text, the redacted text is parsed again and
//! must read as the original with the password `***` and nothing else
//! changed; where it does not (or the text cannot be read unambiguously,
//! as `postgres://bob:pa/ss@h/db`, an unclosed quote), everything from the
//! first place a password could start is hidden.

use std::str::FromStr;

const HIDDEN: &str = "***";
const SCHEMES: [&str; 2] = ["postgresql://", "postgres://"];

/// The keys the driver reads, as libpq spells them (lower case). libpq
/// knows a few more (`sslcert`, `service`, ...) that the driver refuses,
/// and so does cmdscope: they could not be honoured.
const KEYWORDS: [&str; 19] = [
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
    "keepalives_interval",
    "keepalives_retries",
    "sslmode",
    "sslnegotiation",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
    "tcp_user_timeout",
];

/// `text` with every password replaced by `***`. Text that is neither a
/// PostgreSQL URI nor a key/value string with a password comes back as is.
pub fn redact(text: &str) -> String {
    // `--store=VALUE` on a command line: the value is everything after
    // the first `=`, blanks included (a URL's query may hold them).
    if let Some((flag, value)) = text.split_once('=').filter(|(f, _)| f.starts_with('-')) {
        return format!("{flag}={}", redact(value));
    }
    if let Some(scheme) = scheme(text) {
        let redacted = redact_uri(&text[..scheme], &text[scheme..]);
        return verified(text, redacted, || format!("{}{HIDDEN}", &text[..scheme]));
    }
    match conninfo(text) {
        Ok(pairs) => {
            let mut out = String::with_capacity(text.len());
            let mut at = 0;
            for p in pairs {
                let value = &text[p.value.clone()];
                let replacement = if is_password(&p.key) {
                    HIDDEN.to_string()
                } else if scheme(value).is_some() {
                    // A URL as a value: hide all of it where it has a password.
                    let redacted = redact(value);
                    if redacted == value {
                        continue;
                    }
                    redacted
                } else {
                    continue;
                };
                out.push_str(&text[at..p.value.start]);
                out.push_str(&replacement);
                at = p.value.end;
            }
            out.push_str(&text[at..]);
            verified(text, out, || HIDDEN.to_string())
        }
        // Not a key/value string libpq would accept; if it names a password
        // key anyway, its value cannot be located: hide from there on.
        Err(_) => match find_password(text) {
            Some(at) => format!("{}{HIDDEN}", &text[..at]),
            None => text.to_string(),
        },
    }
}

/// Where the driver accepts `original`, `redacted` must read as it with
/// the password `***` and nothing else changed; else `hide_all()`.
fn verified(original: &str, redacted: String, hide_all: impl FnOnce() -> String) -> String {
    let Ok(config) = postgres::Config::from_str(original) else {
        return redacted;
    };
    let mut expected = config.clone();
    if config.get_password().is_some() {
        expected.password(HIDDEN);
    }
    match postgres::Config::from_str(&redacted) {
        // Debug shows every setting but the password, which is compared alone.
        Ok(got)
            if format!("{got:?}") == format!("{expected:?}")
                && got.get_password() == expected.get_password() =>
        {
            redacted
        }
        _ => hide_all(),
    }
}

/// The length of the URI scheme `text` starts with (`postgres://`,
/// `postgresql://`, in any case), if any.
fn scheme(text: &str) -> Option<usize> {
    SCHEMES
        .iter()
        .find(|s| {
            text.get(..s.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(s))
        })
        .map(|s| s.len())
}

/// True for text that starts with a PostgreSQL URI's scheme, in any case.
pub(crate) fn is_url(text: &str) -> bool {
    scheme(text).is_some()
}

fn is_password(key: &str) -> bool {
    key.eq_ignore_ascii_case("password")
}

/// Where a value could start after the first `password` (any case) in a
/// text that does not parse: right after it and an `=`, if one follows.
fn find_password(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let key = lower.find("password")? + "password".len();
    let rest = &text[key..];
    let spaces = rest.len() - rest.trim_start().len();
    Some(match rest[spaces..].strip_prefix('=') {
        Some(_) => key + spaces + 1,
        None => key,
    })
}

/// True for text meant as a PostgreSQL connection string, accepted or
/// not: a `postgres://` or `postgresql://` URI (any case), text whose first
/// word is a `key=` (`host=h`, `a=b.db`), or text naming a password key.
/// Such text is never taken for an SQLite file's path.
pub fn looks_like_connection(text: &str) -> bool {
    if scheme(text).is_some() {
        return true;
    }
    let first = text.trim_start();
    let key_len = first
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(first.len());
    let key_first = first
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let keyed = key_first && first[key_len..].trim_start().starts_with('=');
    keyed || find_password(text).is_some_and(|at| text[..at].ends_with('='))
}

/// Why the driver refuses the connection string `text`, in words that
/// quote no part of it but the key names it uses; None when it accepts it.
pub fn refusal(text: &str) -> Option<String> {
    let err = postgres::Config::from_str(text).err()?;
    let keys = match scheme(text) {
        Some(s) if text[..s].chars().any(|c| c.is_ascii_uppercase()) => {
            return Some(format!(
                "the scheme is '{}', in lower case",
                text[..s].to_ascii_lowercase()
            ))
        }
        Some(s) => uri_keys(&text[s..]),
        None => conninfo(text).map(|pairs| pairs.into_iter().map(|p| p.key).collect()),
    };
    let keys = match keys {
        Ok(keys) => keys,
        Err(why) => return Some(why.to_string()),
    };
    if let Some(key) = keys.iter().find(|k| !KEYWORDS.contains(&k.as_str())) {
        let shown = crate::output::escape_line(key);
        let lower = key.to_ascii_lowercase();
        return Some(if KEYWORDS.contains(&lower.as_str()) {
            format!("key '{shown}' is not one libpq knows: keys are lower case ('{lower}')")
        } else {
            format!("key '{shown}' is not one libpq knows (or the driver supports)")
        });
    }
    // What remains is the driver's own reason, shown only in the forms
    // that name no part of the text but a key (an invalid port, say).
    let reason = std::error::Error::source(&err).map(|s| s.to_string());
    Some(match reason {
        Some(r) if r.starts_with("invalid value for option `") || r == "unexpected EOF" => r,
        _ => "the driver cannot read it".to_string(),
    })
}

/// The (percent-decoded) keys of a URI's query; `rest` follows the scheme.
fn uri_keys(rest: &str) -> Result<Vec<String>, &'static str> {
    let Some(q) = rest.find('?') else {
        return Ok(Vec::new());
    };
    rest[q + 1..]
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) => percent_decode(key).ok_or("a query key is not valid UTF-8"),
            None => Err("a query parameter has no '='"),
        })
        .collect()
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
                    Some((key, _)) if percent_decode(key).is_some_and(|k| is_password(&k)) => {
                        out.push_str(key);
                        out.push('=');
                        out.push_str(HIDDEN);
                    }
                    Some((key, _)) if percent_decode(key).is_none() => return hide_all(),
                    // A pair without '=' may be the start of a password
                    // key the rest of the query continues.
                    None if find_password(pair).is_some() => return hide_all(),
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

/// Parses a libpq key/value connection string as the driver does: keys up
/// to white space or `=`, values either bare (up to white space, `\`
/// escapes the next character) or in single quotes (`\` escapes). Fails
/// on a missing `=`, an empty bare value, an unterminated quote, or when
/// there is no pair at all, with the reason.
fn conninfo(text: &str) -> Result<Vec<Pair>, &'static str> {
    let mut it = text.char_indices().peekable();
    let end = text.len();
    let mut pairs = Vec::new();
    let skip_ws = |it: &mut std::iter::Peekable<std::str::CharIndices>| {
        while it.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_ws(&mut it);
        let Some(&(key_start, _)) = it.peek() else {
            break;
        };
        while it
            .next_if(|&(_, c)| c != '=' && !c.is_whitespace())
            .is_some()
        {}
        let key_end = it.peek().map_or(end, |&(i, _)| i);
        skip_ws(&mut it);
        if key_end == key_start || it.next_if(|&(_, c)| c == '=').is_none() {
            return Err("a key without '=' and a value");
        }
        skip_ws(&mut it);
        let value_start = it.peek().map_or(end, |&(i, _)| i);
        if it.next_if(|&(_, c)| c == '\'').is_some() {
            loop {
                match it.next() {
                    None => return Err("a quoted value is not closed"),
                    Some((_, '\\')) => {
                        it.next();
                    }
                    Some((_, '\'')) => break,
                    Some(_) => {}
                }
            }
        } else {
            while let Some((_, c)) = it.next_if(|(_, c)| !c.is_whitespace()) {
                if c == '\\' {
                    it.next();
                }
            }
        }
        let value_end = it.peek().map_or(end, |&(i, _)| i);
        if value_end == value_start {
            return Err("a key without a value");
        }
        pairs.push(Pair {
            key: text[key_start..key_end].to_string(),
            value: value_start..value_end,
        });
    }
    if pairs.is_empty() {
        Err("no key=value pair")
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
                "postgresql://h/db?user=a&password=zz&sslmode=disable",
                "postgresql://h/db?user=a&password=***&sslmode=disable",
            ),
            (
                "postgresql://h/db?user=a&pass%77ord=zz",
                "postgresql://h/db?user=a&pass%77ord=***",
            ),
            (
                "postgresql://h/db?user=u&PASSWORD=e",
                "postgresql://h/db?user=u&PASSWORD=***",
            ),
            (
                "postgresql://h/db?PassWord=e&x=1",
                "postgresql://h/db?PassWord=***&x=1",
            ),
            ("POSTGRES://bob:pw@h/db", "POSTGRES://bob:***@h/db"),
            ("postgresql://h/db?%zz=1", "postgresql://***"),
            // The driver reads the key `x&password`; the value is hidden all the same.
            (
                "postgresql://h/db?x&password=e",
                "postgresql://h/db?x&password=***",
            ),
            ("postgresql://h/db?x&passwordsecret", "postgresql://***"),
            ("postgres://", "postgres://"),
        ] {
            assert_eq!(redact(input), expected, "{input}");
        }
    }

    #[test]
    fn key_value_strings_lose_their_passwords() {
        for (input, expected) in [
            ("host=h password=zz user=a", "host=h password=*** user=a"),
            ("host=h PASSWORD=zz user=a", "host=h PASSWORD=*** user=a"),
            (
                "host=h password = 'a b\\' c' user=a",
                "host=h password = *** user=a",
            ),
            ("password=a\\ b", "password=***"),
            ("host=h password='open", "host=h password=***"),
            ("host=h Password= 'open", "host=h Password=***"),
            ("host=h password", "host=h password***"),
            (
                "--store=postgres://u:p@h/db",
                "--store=postgres://u:***@h/db",
            ),
            (
                "--store=postgres://u@h/db?password=a b&x",
                "--store=postgres://u@h/db?password=***&x",
            ),
            (
                "--store=host=h password='a b' port=1",
                "--store=host=h password=*** port=1",
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
    fn connection_strings_are_recognised_and_never_taken_for_paths() {
        for text in [
            "host=h port=1 password=x",
            "dbname = 'my db'",
            "host=h PASSWORD=e",
            "password='e",
            "a=b",
            "runs=1.db",
            "POSTGRESQL://h/db",
            "x.db password=e",
        ] {
            assert!(looks_like_connection(text), "{text}");
        }
        for text in [
            "results.sqlite3",
            "dir/a=b.sqlite",
            "./a=b.db",
            "=x",
            "9=x",
            "/tmp/x.db",
            "passwords.db",
        ] {
            assert!(!looks_like_connection(text), "{text}");
        }
    }

    #[test]
    fn the_driver_decides_and_its_refusals_quote_no_value() {
        assert_eq!(refusal("host=h dbname=x password='a b'"), None);
        assert_eq!(refusal("postgres://u:p@h:1/db?sslmode=disable"), None);
        let why = |t: &str| refusal(t).unwrap_or_else(|| panic!("{t} accepted"));
        assert!(why("host=h PASSWORD=e").contains("keys are lower case ('password')"));
        assert!(why("postgresql://h/db?user=u&PASSWORD=e").contains("'PASSWORD'"));
        assert!(why("host=h sslcert=x").contains("'sslcert' is not one libpq knows"));
        assert_eq!(why("host=h password='e"), "a quoted value is not closed");
        assert!(why("POSTGRES://h/db").contains("'postgres://', in lower case"));
        assert_eq!(why("host=h port=x"), "invalid value for option `port`");
        // A password with a blank, unquoted: "s3" is the password, "cr"
        // a key without '='; the message names neither value.
        let w = why("host=h password=s3 cr et");
        assert!(!w.contains("s3") && !w.contains("et"), "{w}");
    }

    #[test]
    fn the_keywords_are_the_drivers() {
        for key in KEYWORDS {
            let err = postgres::Config::from_str(&format!("{key}=1"))
                .err()
                .and_then(|e| std::error::Error::source(&e).map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(!err.contains("unknown option"), "{key}: {err}");
        }
        for key in ["sslcert", "service", "Password", "HOST"] {
            assert!(postgres::Config::from_str(&format!("{key}=1")).is_err());
        }
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
