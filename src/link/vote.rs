//! Self-consistency voting over k sampled answers (Lucy, Appendix E.1):
//! count in how many samples each item appears, rank by that count, keep
//! items with at least `min_votes` votes, at most `max_items` per group.

/// One ranked item.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// Candidate index.
    pub item: usize,
    pub votes: usize,
    /// Mean position of the item in the answers that contain it.
    pub mean_position: f64,
    pub kept: bool,
}

/// Rank the items of `samples` (each a list of candidate indices, duplicates
/// ignored). Ties are broken by mean position in the answers, then by
/// candidate order, so the result is deterministic. `group` assigns each
/// item to a group (e.g. table vs attribute) that `max_items` caps separately.
pub fn rank(samples: &[Vec<usize>], min_votes: usize, max_items: usize, group: impl Fn(usize) -> usize) -> Vec<Ranked> {
    let mut stats: Vec<(usize, usize, f64)> = Vec::new(); // (item, votes, position sum)
    for sample in samples {
        let mut seen = Vec::new();
        for &item in sample {
            if seen.contains(&item) {
                continue;
            }
            let pos = seen.len() as f64;
            seen.push(item);
            match stats.iter_mut().find(|s| s.0 == item) {
                Some(s) => {
                    s.1 += 1;
                    s.2 += pos;
                }
                None => stats.push((item, 1, pos)),
            }
        }
    }
    let mut ranked: Vec<Ranked> = stats
        .into_iter()
        .map(|(item, votes, sum)| Ranked { item, votes, mean_position: sum / votes as f64, kept: false })
        .collect();
    ranked.sort_by(|a, b| {
        b.votes.cmp(&a.votes).then(a.mean_position.total_cmp(&b.mean_position)).then(a.item.cmp(&b.item))
    });
    let mut per_group: Vec<(usize, usize)> = Vec::new();
    for r in &mut ranked {
        if r.votes < min_votes.max(1) {
            continue;
        }
        let g = group(r.item);
        let count = match per_group.iter_mut().find(|x| x.0 == g) {
            Some(x) => &mut x.1,
            None => {
                per_group.push((g, 0));
                &mut per_group.last_mut().expect("just pushed").1
            }
        };
        if *count < max_items {
            *count += 1;
            r.kept = true;
        }
    }
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(r: &[Ranked]) -> Vec<usize> {
        r.iter().filter(|x| x.kept).map(|x| x.item).collect()
    }

    #[test]
    fn ranks_by_votes_then_position() {
        let s = vec![vec![1, 2], vec![2, 1, 3], vec![2], vec![3, 3, 3]];
        let r = rank(&s, 1, 8, |_| 0);
        assert_eq!(r.iter().map(|x| (x.item, x.votes)).collect::<Vec<_>>(), vec![(2, 3), (1, 2), (3, 2)]);
        assert_eq!(kept(&r), vec![2, 1, 3]);
    }

    #[test]
    fn threshold_and_cap() {
        let s = vec![vec![0, 1, 2], vec![0, 1], vec![0]];
        assert_eq!(kept(&rank(&s, 2, 8, |_| 0)), vec![0, 1]);
        assert_eq!(kept(&rank(&s, 3, 8, |_| 0)), vec![0]);
        assert_eq!(kept(&rank(&s, 1, 2, |_| 0)), vec![0, 1]);
        // Separate caps per group: items < 2 are group 0, others group 1.
        assert_eq!(kept(&rank(&s, 1, 1, |i| usize::from(i >= 2))), vec![0, 2]);
    }

    #[test]
    fn empty_samples_keep_nothing() {
        assert!(rank(&[vec![], vec![]], 1, 8, |_| 0).is_empty());
        assert!(rank(&[], 1, 8, |_| 0).is_empty());
    }
}
