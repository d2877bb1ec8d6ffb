//! What one graph's inferences work on once the checks passed, and where each inference's results go.

use crate::file_kinds::FileKinds;
use crate::input_list::InputList;
use lpai_direct_stub::stub::GraphDescription;
use std::path::{Path, PathBuf};

/// What one graph's inferences work on, after the up-front checks.
pub struct Plan<'a> {
    /// The loaded context.
    pub context: i32,
    /// The graph's index in it.
    pub graph_index: usize,
    /// The graph.
    pub graph: &'a GraphDescription,
    /// The checked input list.
    pub list: &'a InputList,
    /// How each input and output file is kept.
    pub kinds: &'a FileKinds,
    /// Results go to `Result_<i>/<this>/` (runs of several graphs).
    pub result_subdir: Option<&'a str>,
}

impl Plan<'_> {
    /// The directory inference `result_index`'s files go to (`lpai_direct::job::ResultPath`, the skel's layout too).
    pub fn result_directory(&self, output_dir: &Path, result_index: usize) -> PathBuf {
        let index = u32::try_from(result_index).unwrap_or(u32::MAX);
        let path = lpai_direct::job::ResultPath::new(index, self.result_subdir.map(str::as_bytes));
        output_dir.join(String::from_utf8_lossy(&path.parts().concat()).as_ref())
    }
}
