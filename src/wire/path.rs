//! What the reader and writer share: where in a message they are (for error messages) and
//! the kinds of length prefix.

use std::fmt::Write as _;

#[derive(Debug, Clone, Copy)]
enum Segment {
    Field(&'static str),
    Index(usize),
}

/// A root name followed by field names and array indices: `Root.Field[3].Inner`.
#[derive(Debug, Clone)]
pub(super) struct Path {
    root: &'static str,
    segments: Vec<Segment>,
}

impl Path {
    pub(super) fn new(root: &'static str) -> Self {
        Path {
            root,
            segments: Vec::new(),
        }
    }

    pub(super) fn root(&self) -> &'static str {
        self.root
    }

    pub(super) fn render(&self) -> String {
        let mut out = String::from(self.root);
        for segment in &self.segments {
            match segment {
                Segment::Field(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Segment::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }

    /// The path with `name` appended (nothing for an empty name), rendered.
    pub(super) fn render_with(&self, name: &'static str) -> String {
        let mut path = self.clone();
        path.push_field(name);
        path.render()
    }

    /// Appends `name` unless it is empty; returns whether it did, for [`Path::pop_if`].
    pub(super) fn push_field(&mut self, name: &'static str) -> bool {
        if name.is_empty() {
            false
        } else {
            self.segments.push(Segment::Field(name));
            true
        }
    }

    pub(super) fn push_index(&mut self, i: usize) {
        self.segments.push(Segment::Index(i));
    }

    pub(super) fn pop(&mut self) {
        self.segments.pop();
    }

    pub(super) fn pop_if(&mut self, pushed: bool) {
        if pushed {
            self.segments.pop();
        }
    }
}

/// Runs `f` on `s` with `name` appended to the path `path(s)` returns.
pub(super) fn in_field<S, T>(
    s: &mut S,
    path: impl Fn(&mut S) -> &mut Path,
    name: &'static str,
    f: impl FnOnce(&mut S) -> T,
) -> T {
    let pushed = path(s).push_field(name);
    let out = f(s);
    path(s).pop_if(pushed);
    out
}

/// How a string, bytes or array states its length (and null).
#[derive(Debug, Clone, Copy)]
pub(super) enum Prefix {
    /// int16, -1 = null (`string`).
    Int16,
    /// int32, -1 = null (`bytes`, arrays).
    Int32,
    /// uvarint `n + 1`, 0 = null (flexible versions).
    Compact,
}
