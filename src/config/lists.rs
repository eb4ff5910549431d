//! Comma lists on the `txbench run` command line (`-t 1,2,4,8 --theta 0.6,0.99`): a shorthand for
//! a sweep. Each list flag is expanded into one command line per combination of its values, before
//! clap sees the command line; every combination is then parsed and validated as an ordinary run,
//! so a value clap or validation rejects is reported as it would be for a single run (exit 2,
//! naming the flag and the value) and before anything runs.
//!
//! Working on the raw arguments keeps [`RunArgs`](super::RunArgs) unchanged (its fields keep their
//! single-value types), so flags added later need no change here unless they should take lists.

/// The flags whose values may be comma lists: the numeric axes people sweep. `(long, short)`.
/// Flags whose values contain commas themselves (`--protocol`, `--mix`) are not here: a protocol
/// list already runs every protocol, and a mix is one value.
pub const LIST_FLAGS: &[(&str, Option<char>)] = &[
    ("threads", Some('t')),
    ("theta", None),
    ("ops", None),
    ("records", None),
    ("warehouses", None),
    ("read-ratio", None),
    ("writes", None),
    ("payload", None),
    ("long-ops", None),
    ("long-share", None),
    ("hot-records", None),
    ("scan-length", None),
    ("duration", Some('d')),
    ("rate", None),
];

/// One combination of list values: the command line to parse, and the value each list flag took
/// (flag name without dashes, value), in the order the flags appeared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPoint {
    /// The full command line, program name first, with every list replaced by one value.
    pub argv: Vec<String>,
    /// `(flag, value)` for each flag that was given a list.
    pub axes: Vec<(String, String)>,
}

/// Where a list flag's value sits in the command line.
struct ListSite {
    /// Index of the token holding the value.
    token: usize,
    /// What precedes the value in that token (`--threads=`, `-t`, or nothing when the value is a
    /// token of its own).
    prefix: String,
    /// The flag's long name.
    name: &'static str,
    /// The values, in the order given.
    values: Vec<String>,
}

/// The list flag named by `token` (`--threads`, `--threads=…`, `-t`, `-t…`), with the value the
/// token carries itself, if any.
fn list_flag(token: &str) -> Option<(&'static str, Option<(String, &str)>)> {
    if let Some(long) = token.strip_prefix("--") {
        let (name, value) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        let &(flag, _) = LIST_FLAGS.iter().find(|(l, _)| *l == name)?;
        return Some((flag, value.map(|v| (format!("--{flag}="), v))));
    }
    let mut chars = token.strip_prefix('-')?.chars();
    let c = chars.next()?;
    let &(flag, _) = LIST_FLAGS.iter().find(|(_, s)| *s == Some(c))?;
    let rest = chars.as_str();
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    if rest.is_empty() {
        Some((flag, None))
    } else {
        Some((flag, Some((format!("-{c}="), rest))))
    }
}

/// Expands the comma lists of a `txbench run` command line into one command line per
/// combination (the first list varies slowest). A command line without lists, or of another
/// subcommand, comes back as the only point, unchanged. An empty item (`1,,2`) stays in the
/// expansion so that clap rejects it by name.
pub fn expand_lists(argv: &[String]) -> Vec<ListPoint> {
    let single = || {
        vec![ListPoint {
            argv: argv.to_vec(),
            axes: Vec::new(),
        }]
    };
    if argv.get(1).map(String::as_str) != Some("run") {
        return single();
    }
    let mut sites = Vec::new();
    let mut i = 2;
    while i < argv.len() {
        let token = &argv[i];
        if token == "--" {
            break;
        }
        if let Some((name, inline)) = list_flag(token) {
            let (at, prefix, value) = match inline {
                Some((prefix, value)) => (i, prefix, value.to_string()),
                None if i + 1 < argv.len() => {
                    i += 1;
                    (i, String::new(), argv[i].clone())
                }
                None => break,
            };
            if value.contains(',') {
                sites.push(ListSite {
                    token: at,
                    prefix,
                    name,
                    values: value.split(',').map(|v| v.trim().to_string()).collect(),
                });
            }
        }
        i += 1;
    }
    if sites.is_empty() {
        return single();
    }
    let mut points = vec![ListPoint {
        argv: argv.to_vec(),
        axes: Vec::new(),
    }];
    for site in &sites {
        points = points
            .into_iter()
            .flat_map(|p| {
                site.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.argv[site.token] = format!("{}{v}", site.prefix);
                    q.axes.push((site.name.to_string(), v.clone()));
                    q
                })
            })
            .collect();
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn no_list_is_one_unchanged_point() {
        let a = argv("txbench run -t 2 --theta 0.5 -p silo,tictoc --mix new_order=50,payment=50");
        assert_eq!(
            expand_lists(&a),
            vec![ListPoint {
                argv: a.clone(),
                axes: vec![]
            }]
        );
        let l = argv("txbench list -t 1,2");
        assert_eq!(expand_lists(&l).len(), 1);
    }

    #[test]
    fn lists_expand_to_every_combination_in_order() {
        let a = argv("txbench run -t 1,2 --theta=0.6,0.8,0.99 --check");
        let points = expand_lists(&a);
        assert_eq!(points.len(), 6);
        assert_eq!(points[0].argv, argv("txbench run -t 1 --theta=0.6 --check"));
        assert_eq!(
            points[5].argv,
            argv("txbench run -t 2 --theta=0.99 --check")
        );
        assert_eq!(
            points[1].axes,
            vec![
                ("threads".to_string(), "1".to_string()),
                ("theta".to_string(), "0.8".to_string())
            ]
        );
    }

    #[test]
    fn attached_short_values_and_empty_items_are_kept() {
        let points = expand_lists(&argv("txbench run -t1,,4"));
        let lines: Vec<_> = points.iter().map(|p| p.argv[2].clone()).collect();
        assert_eq!(lines, ["-t=1", "-t=", "-t=4"]);
        // A list after `--` is not a flag.
        assert_eq!(expand_lists(&argv("txbench run -- -t 1,2")).len(), 1);
    }
}
