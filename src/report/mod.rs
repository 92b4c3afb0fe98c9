//! Output: the terminal report and the export formats. One file per format.

pub mod changes;
pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod site;
pub mod svg;
pub mod terminal;
