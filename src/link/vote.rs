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

/// Whether the vote over `samples` is decided: no `remaining` further
/// samples (each any list of the `candidates` offered, in any order) can
/// change what [`rank`] keeps or the order it keeps it in, so the vote over
/// `samples` alone keeps exactly what the vote over every sample would
/// (adaptive consistency: the caller stops sampling). Sound, not complete:
/// it may answer `false` for a vote that is in fact decided, never `true`
/// for one that is not. It holds when
/// - every candidate is either kept already (at least `min_votes` votes)
///   or cannot reach `min_votes` with `remaining` more;
/// - no group keeps more than `max_items` (so no cap decides between
///   items);
/// - each kept item has more than `remaining` votes more than the kept item
///   after it (so no later vote, nor the mean position that breaks ties,
///   can reorder them).
pub fn decided(
    samples: &[Vec<usize>],
    remaining: usize,
    candidates: usize,
    min_votes: usize,
    max_items: usize,
    group: impl Fn(usize) -> usize,
) -> bool {
    if remaining == 0 {
        return true;
    }
    let min = min_votes.max(1);
    let mut votes = vec![0usize; candidates];
    for s in samples {
        let mut seen: Vec<usize> = Vec::new();
        for &i in s {
            if i < candidates && !seen.contains(&i) {
                seen.push(i);
                votes[i] += 1;
            }
        }
    }
    if votes.iter().any(|&v| v < min && v + remaining >= min) {
        return false;
    }
    let ranked = rank(samples, min_votes, usize::MAX, &group);
    let kept: Vec<&Ranked> = ranked.iter().filter(|r| r.kept).collect();
    let mut per_group: Vec<(usize, usize)> = Vec::new();
    for r in &kept {
        let g = group(r.item);
        match per_group.iter_mut().find(|x| x.0 == g) {
            Some(x) => x.1 += 1,
            None => per_group.push((g, 1)),
        }
    }
    if per_group.iter().any(|&(_, n)| n > max_items) {
        return false;
    }
    kept.windows(2).all(|w| w[0].votes > w[1].votes + remaining)
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

    #[test]
    fn a_unanimous_single_answer_decides_a_strict_vote_and_a_split_one_does_not() {
        // --min-votes 3 of 5: three samples of [A] leave nothing open.
        let three = vec![vec![0], vec![0], vec![0]];
        assert!(decided(&three, 2, 4, 3, 8, |_| 0));
        // Any vote still open: B named once could reach 3.
        let split = vec![vec![0], vec![0, 1], vec![0]];
        assert!(!decided(&split, 2, 4, 3, 8, |_| 0));
        // The default (--min-votes 1): any unnamed candidate may still come in.
        assert!(!decided(&three, 2, 4, 1, 8, |_| 0));
        // ... unless there is only the one candidate.
        assert!(decided(&[vec![0]], 4, 1, 1, 8, |_| 0));
        // Two kept items whose order two more samples could swap.
        assert!(!decided(&[vec![0, 1], vec![0, 1], vec![0, 1]], 2, 2, 1, 8, |_| 0));
        // Nothing left to sample.
        assert!(decided(&split, 0, 4, 3, 8, |_| 0));
    }

    use proptest::prelude::*;

    fn kept_list(s: &[Vec<usize>], min: usize, max: usize) -> Vec<usize> {
        kept(&rank(s, min, max, |i| i % 2))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]
        /// Whenever the first samples decide the vote, the full vote keeps
        /// exactly what they keep, in the same order, whatever the other
        /// samples say.
        #[test]
        fn a_decided_vote_equals_the_full_vote(
            candidates in 1usize..5,
            min_votes in 1usize..4,
            max_items in 1usize..4,
            first in 1usize..5,
            all in proptest::collection::vec(proptest::collection::vec(0usize..5, 0..5), 5..9),
        ) {
            let all: Vec<Vec<usize>> = all.into_iter().map(|s| s.into_iter().filter(|&i| i < candidates).collect()).collect();
            let first = first.min(all.len());
            let (head, _) = all.split_at(first);
            if decided(head, all.len() - first, candidates, min_votes, max_items, |i| i % 2) {
                prop_assert_eq!(kept_list(head, min_votes, max_items), kept_list(&all, min_votes, max_items));
            }
        }
    }

    /// The property on every extension of small votes (not just random
    /// ones): two candidates, first samples over all their lists.
    #[test]
    fn exhaustive_small_votes_decide_only_when_the_full_vote_agrees() {
        let lists: Vec<Vec<usize>> = vec![vec![], vec![0], vec![1], vec![0, 1], vec![1, 0]];
        let mut decided_count = 0;
        for min in 1..=3 {
            for a in &lists {
                for b in &lists {
                    for c in &lists {
                        let head = vec![a.clone(), b.clone(), c.clone()];
                        if !decided(&head, 2, 2, min, 8, |_| 0) {
                            continue;
                        }
                        decided_count += 1;
                        for d in &lists {
                            for e in &lists {
                                let full = vec![a.clone(), b.clone(), c.clone(), d.clone(), e.clone()];
                                assert_eq!(
                                    kept_list(&head, min, 8),
                                    kept_list(&full, min, 8),
                                    "{head:?} + {d:?} {e:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(decided_count > 0, "some votes are decided");
    }
}
