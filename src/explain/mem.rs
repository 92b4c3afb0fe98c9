//! Reading a stopped tracee's memory with `process_vm_readv`: clone3's
//! argument struct, execve's file name and environment pointer array.
//! Every read is bounded and may come back short (unmapped pages, a task
//! that died): callers get what could be read.

const PAGE: u64 = 4096;

/// Reads up to `buf.len()` bytes at `addr` in `pid`; returns how many were read.
pub fn read(pid: i32, addr: u64, buf: &mut [u8]) -> usize {
    if addr == 0 || buf.is_empty() {
        return 0;
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: local points to a writable buffer of iov_len bytes; the remote
    // address is only interpreted by the kernel in the other process.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        0
    } else {
        n as usize
    }
}

pub fn read_u64(pid: i32, addr: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    (read(pid, addr, &mut b) == 8).then(|| u64::from_ne_bytes(b))
}

/// A NUL-terminated string of at most `max` bytes (without the NUL). Read
/// page by page so a string ending just before an unmapped page is found.
pub fn read_cstring(pid: i32, addr: u64, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = addr;
    let mut chunk = [0u8; PAGE as usize];
    while out.len() < max && at != 0 {
        let to_page_end = (PAGE - at % PAGE) as usize;
        let want = to_page_end.min(max - out.len()).min(chunk.len());
        let got = read(pid, at, &mut chunk[..want]);
        if got == 0 {
            break;
        }
        if let Some(nul) = chunk[..got].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return out;
        }
        out.extend_from_slice(&chunk[..got]);
        if got < want {
            break;
        }
        at = at.wrapping_add(got as u64);
    }
    out
}

/// Counts the entries of a NULL-terminated pointer array (argv, envp), up to `max`.
pub fn count_pointers(pid: i32, addr: u64, max: u64) -> Option<u64> {
    if addr == 0 {
        return Some(0);
    }
    let mut count = 0u64;
    let mut at = addr;
    let mut chunk = [0u8; 4096];
    loop {
        let want = ((PAGE - at % PAGE) as usize).min(chunk.len());
        let got = read(pid, at, &mut chunk[..want]);
        if got < 8 {
            return (count > 0).then_some(count);
        }
        for word in chunk[..got - got % 8].chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(word);
            if u64::from_ne_bytes(b) == 0 {
                return Some(count);
            }
            count += 1;
            if count >= max {
                return Some(count);
            }
        }
        at = at.wrapping_add((got - got % 8) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_memory() {
        let me = std::process::id() as i32;
        let text = b"hello, tracee\0trailing";
        let s = read_cstring(me, text.as_ptr() as u64, 100);
        assert_eq!(s, b"hello, tracee");
        assert_eq!(read_cstring(me, text.as_ptr() as u64, 5), b"hello");
        assert_eq!(read_cstring(me, 0, 5), b"");
        let value: u64 = 0x4000_0100;
        assert_eq!(read_u64(me, &value as *const u64 as u64), Some(0x4000_0100));
        let strings = [
            c"a".as_ptr(),
            c"b".as_ptr(),
            c"c".as_ptr(),
            std::ptr::null(),
        ];
        assert_eq!(count_pointers(me, strings.as_ptr() as u64, 100), Some(3));
        assert_eq!(count_pointers(me, strings.as_ptr() as u64, 2), Some(2));
        assert_eq!(count_pointers(me, 0, 2), Some(0));
        // Unmapped memory reads as nothing.
        assert_eq!(read_u64(me, 8), None);
    }

    #[test]
    fn strings_across_pages() {
        let me = std::process::id() as i32;
        // A string that crosses a page boundary.
        let mut buf = vec![b'z'; 3 * PAGE as usize];
        let base = buf.as_ptr() as u64;
        let start = (base / PAGE + 1) * PAGE - 10;
        let end = start + 5000;
        buf[(end - base) as usize] = 0;
        let s = read_cstring(me, start, 10_000);
        assert_eq!(s.len(), 5000);
    }
}
