//! Colour for the terminal report: ANSI codes only when enabled, so
//! every renderer of terminal text takes one `Paint` and never asks the
//! terminal itself.

/// ANSI colours, only when enabled (a terminal, and NO_COLOR unset).
#[derive(Clone, Copy, Debug)]
pub struct Paint {
    pub enabled: bool,
}

/// Green, for a painter handed as a function (the front door's progress
/// bar paints its estimate so).
pub fn green(t: &str) -> String {
    Paint { enabled: true }.green(t)
}

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    pub fn bold(&self, t: &str) -> String {
        self.wrap("1", t)
    }
    pub fn green(&self, t: &str) -> String {
        self.wrap("32", t)
    }
    pub fn yellow(&self, t: &str) -> String {
        self.wrap("33", t)
    }
    pub fn cyan(&self, t: &str) -> String {
        self.wrap("36", t)
    }
    /// Bold and green in one code, as hyperfine's terminal writes them.
    pub fn bold_green(&self, t: &str) -> String {
        self.wrap("1;32", t)
    }
    pub fn bold_red(&self, t: &str) -> String {
        self.wrap("1;31", t)
    }
    pub fn blue(&self, t: &str) -> String {
        self.wrap("34", t)
    }
    pub fn purple(&self, t: &str) -> String {
        self.wrap("35", t)
    }
    pub fn dim(&self, t: &str) -> String {
        self.wrap("2", t)
    }
}
