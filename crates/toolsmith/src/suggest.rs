//! "Did you mean" hints for names a user misspelt (capabilities, arguments, configuration keys).

/// ` (did you mean 'X'?)` for the known name closest to `name`, if one is close enough.
pub(crate) fn closest(name: &str, known: &[&str]) -> String {
    known
        .iter()
        .map(|k| (edit_distance(&k.to_lowercase(), &name.to_lowercase()), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min()
        .map(|(_, k)| format!(" (did you mean '{k}'?)"))
        .unwrap_or_default()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("thinkng", "thinking"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggests_a_close_name_only() {
        assert_eq!(closest("prefx", &["prefix", "capability"]), " (did you mean 'prefix'?)");
        assert_eq!(closest("Thinkng", &["Thinking"]), " (did you mean 'Thinking'?)");
        assert_eq!(closest("zzz", &["prefix"]), "");
    }
}
