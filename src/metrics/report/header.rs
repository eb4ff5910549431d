//! The text around a table, wrapped to the terminal: the run's description above it
//! (`config::describe_run`) and the protocols' own statistics below it.

/// The widest line `config::describe_run` and `render_protocol_stats` write: the default table fits a
/// 100-column terminal, and so does the text around it.
pub(crate) const HEADER_WIDTH: usize = 100;

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole),
/// continuation lines indented by two spaces.
pub(crate) fn wrap_words(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut line_len = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = word.chars().count();
        if line_len > 0 && line_len + 1 + len > width {
            out.push_str("\n  ");
            line_len = 2;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_fit_the_width_and_keep_every_word() {
        let text = "ycsb: index array, key_dist zipf, long_ops 16, long_share 0.0, long_txn_delay_us 0, \
                    ops 16, payload 100, read_ratio 0.5, records 1048576, rmw false, theta 0.99;";
        let wrapped = wrap_words(text, 40);
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 40),
            "{wrapped}"
        );
        assert!(wrapped.lines().count() > 1);
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&wrapped), words(text));
        assert_eq!(wrap_words("short line", 40), "short line");
        // A word longer than the width stays whole on its own line.
        assert_eq!(wrap_words("a abcdefghij b", 5), "a\n  abcdefghij\n  b");
    }
}
