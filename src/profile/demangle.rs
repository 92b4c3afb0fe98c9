//! Function names as their language prints them: Rust's two manglings
//! (legacy and v0, `rustc-demangle`, without the hash), C++'s Itanium ABI
//! with parameters and clone suffixes, and Go's symbols as Go's runtime
//! and pprof print them. C names and anything not recognised are kept as
//! they are. Swift names are kept mangled: no Rust crate demangles them
//! well (the one that does wraps Swift's own C++ demangler).
//!
//! C++ names are demangled by the system's C++ runtime where there is one
//! (`__cxa_demangle` of libstdc++, loaded on first use: the demangler of
//! c++filt, binutils and gdb, so names read as those tools print them),
//! else by the `cpp_demangle` crate, which differs from them in corners
//! (a pack expansion of `T&&` loses its `&&`).

/// How a module's names are mangled, beyond what the names themselves say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scheme {
    /// Decided per name from its prefix.
    #[default]
    ByName,
    /// A Go binary: its symbols are Go's.
    Go,
}

/// The readable form of one symbol name.
pub fn demangle(name: &str, scheme: Scheme) -> String {
    if scheme == Scheme::Go {
        return go(name);
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        if let Some(d) = cpp(name) {
            return d;
        }
    }
    name.to_string()
}

fn cpp(name: &str) -> Option<String> {
    if let Some(f) = cxa_demangle() {
        return system(f, name);
    }
    let sym = cpp_demangle::Symbol::new(name).ok()?;
    sym.demangle().ok().filter(|d| !d.is_empty())
}

type CxaDemangle = unsafe extern "C" fn(
    *const libc::c_char,
    *mut libc::c_char,
    *mut libc::size_t,
    *mut libc::c_int,
) -> *mut libc::c_char;

/// The C++ runtime's demangler, when libstdc++ can be loaded.
fn cxa_demangle() -> Option<CxaDemangle> {
    static FOUND: std::sync::OnceLock<Option<CxaDemangle>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        // SAFETY: dlopen and dlsym with NUL-terminated names; the library
        // stays loaded for the life of the process (never closed), and the
        // symbol is __cxa_demangle, whose C signature `CxaDemangle` is.
        unsafe {
            let lib = libc::dlopen(
                c"libstdc++.so.6".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_LOCAL,
            );
            if lib.is_null() {
                return None;
            }
            let f = libc::dlsym(lib, c"__cxa_demangle".as_ptr());
            (!f.is_null()).then(|| std::mem::transmute::<*mut libc::c_void, CxaDemangle>(f))
        }
    })
}

/// Names longer than this are not demangled: no real one comes near it,
/// and it bounds the demangler's work on a hostile binary.
const MAX_MANGLED: usize = 64 << 10;

fn system(f: CxaDemangle, name: &str) -> Option<String> {
    if name.len() > MAX_MANGLED {
        return None;
    }
    let c = std::ffi::CString::new(name).ok()?;
    let mut status: libc::c_int = 0;
    // SAFETY: a NUL-terminated name, no buffer of ours (it allocates), and
    // the string it returns is malloc'd: copied, then freed once.
    unsafe {
        let out = f(
            c.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        );
        if out.is_null() {
            return None;
        }
        let text = std::ffi::CStr::from_ptr(out).to_string_lossy().into_owned();
        libc::free(out.cast());
        (status == 0 && !text.is_empty()).then_some(text)
    }
}

/// Go's symbol names escape some bytes of package paths as `%xx` (a dot
/// in a path's last element, for one) and spell the type arguments of a
/// generic function's shared instantiation `[go.shape.int]`; Go prints
/// the first unescaped and the second as `[...]`.
fn go(name: &str) -> String {
    let b = name.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |at: usize| b.get(at).and_then(|&c| (c as char).to_digit(16));
        match b[i] {
            b'%' => match (hex(i + 1), hex(i + 2)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                _ => {
                    out.push(b'%');
                    i += 1;
                }
            },
            b'[' => {
                // The matching bracket: type arguments nest.
                let mut depth = 0;
                let close = (i..b.len()).find(|&j| {
                    match b[j] {
                        b'[' => depth += 1,
                        b']' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                });
                match close {
                    Some(j) => {
                        out.extend_from_slice(b"[...]");
                        i = j + 1;
                    }
                    None => {
                        out.extend_from_slice(&b[i..]);
                        break;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_names_lose_their_hash_in_both_schemes() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE", Scheme::ByName),
            "core::fmt::write"
        );
        assert_eq!(
            demangle("_RNvCs1234_7mycrate3foo", Scheme::ByName),
            "mycrate::foo"
        );
    }

    #[test]
    fn cpp_names_read_as_cxxfilt_prints_them() {
        assert_eq!(
            demangle(
                "_ZN4work4fillINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEEli",
                Scheme::ByName
            ),
            "long work::fill<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(int)"
        );
        assert_eq!(
            demangle("_Z3fooi.isra.0", Scheme::ByName),
            "foo(int) [clone .isra.0]"
        );
        assert_eq!(demangle("_ZN3foo3barEv", Scheme::ByName), "foo::bar()");
        // A pack expansion of T&&, where cpp_demangle drops the &&.
        if cxa_demangle().is_some() {
            assert_eq!(
                demangle("_Z1fIJiSt5tupleIJEEEEvDpOT_", Scheme::ByName),
                "void f<int, std::tuple<> >(int&&, std::tuple<>&&)"
            );
        } else {
            eprintln!("no libstdc++ here: C++ names demangled by cpp_demangle");
        }
    }

    #[test]
    fn c_names_and_unknown_manglings_stay() {
        assert_eq!(demangle("extra_work_b", Scheme::ByName), "extra_work_b");
        assert_eq!(demangle("main.hot", Scheme::ByName), "main.hot");
        assert_eq!(demangle("$s4main3fooyyF", Scheme::ByName), "$s4main3fooyyF");
        assert_eq!(demangle("_Znot a name", Scheme::ByName), "_Znot a name");
    }

    #[test]
    fn go_names_read_as_go_prints_them() {
        assert_eq!(demangle("main.hot", Scheme::Go), "main.hot");
        assert_eq!(
            demangle("sync.(*Mutex).Lock", Scheme::Go),
            "sync.(*Mutex).Lock"
        );
        assert_eq!(
            demangle("gopkg.in/yaml%2ev3.(*parser).parse", Scheme::Go),
            "gopkg.in/yaml.v3.(*parser).parse"
        );
        assert_eq!(
            demangle("main.Sum[go.shape.int]", Scheme::Go),
            "main.Sum[...]"
        );
        assert_eq!(
            demangle("main.Map[go.shape.[]int,go.shape.string].func1", Scheme::Go),
            "main.Map[...].func1"
        );
        assert_eq!(demangle("x%zz[", Scheme::Go), "x%zz[");
        assert_eq!(demangle("x%é", Scheme::Go), "x%é");
    }
}
