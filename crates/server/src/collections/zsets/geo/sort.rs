//! The two sorts a geo search's results go through in Redis 7.0, so that
//! points at equal distances come out in Redis's order: glibc's `qsort`
//! (a stable top-down merge sort) when every result is returned, and
//! Redis's `pqsort` (Bentley and McIlroy's quicksort, recursing only into
//! the parts that hold the returned ranks) when `COUNT` returns fewer.
//!
//! Both take C's three-way comparator as is, so a NaN distance (possible
//! for nearly antipodal points) orders as it does in Redis and never
//! panics, as Rust's sorts may on a comparator that is not a total order.

/// C's comparator result: negative, zero or positive.
pub type Cmp<T> = dyn Fn(&T, &T) -> i32;

/// glibc's `msort_with_tmp`: stable, the left element first on a tie.
pub fn merge_sort<T: Clone>(v: &mut [T], cmp: &Cmp<T>) {
    if v.len() <= 1 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort(&mut v[..mid], cmp);
    merge_sort(&mut v[mid..], cmp);
    let (left, right) = (v[..mid].to_vec(), v[mid..].to_vec());
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        let take_left = j == right.len() || (i < left.len() && cmp(&left[i], &right[j]) <= 0);
        *slot = match take_left {
            true => {
                i += 1;
                left[i - 1].clone()
            }
            false => {
                j += 1;
                right[j - 1].clone()
            }
        };
    }
}

/// Redis's `pqsort(v, n, cmp, lo, hi)`: ranks `lo..=hi` end up sorted.
pub fn partial_sort<T>(v: &mut [T], cmp: &Cmp<T>, lo: usize, hi: usize) {
    partial(v, cmp, 0, v.len(), lo, hi);
}

fn med3<T>(v: &[T], cmp: &Cmp<T>, a: usize, b: usize, c: usize) -> usize {
    if cmp(&v[a], &v[b]) < 0 {
        if cmp(&v[b], &v[c]) < 0 {
            b
        } else if cmp(&v[a], &v[c]) < 0 {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) > 0 {
        b
    } else if cmp(&v[a], &v[c]) < 0 {
        a
    } else {
        c
    }
}

fn vecswap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        v.swap(a + i, b + i);
    }
}

/// True if `lo..=hi` reaches into `start..start + len`.
fn wanted(start: usize, len: usize, lo: usize, hi: usize) -> bool {
    let end = start + len;
    !((lo < start && hi < start) || (lo >= end && hi >= end))
}

fn partial<T>(v: &mut [T], cmp: &Cmp<T>, mut base: usize, mut n: usize, lo: usize, hi: usize) {
    loop {
        if n < 7 {
            for m in base + 1..base + n {
                let mut l = m;
                while l > base && cmp(&v[l - 1], &v[l]) > 0 {
                    v.swap(l, l - 1);
                    l -= 1;
                }
            }
            return;
        }
        let mut pm = base + n / 2;
        if n > 7 {
            let (mut pl, mut pn) = (base, base + n - 1);
            if n > 40 {
                let d = n / 8;
                pl = med3(v, cmp, pl, pl + d, pl + 2 * d);
                pm = med3(v, cmp, pm - d, pm, pm + d);
                pn = med3(v, cmp, pn - 2 * d, pn - d, pn);
            }
            pm = med3(v, cmp, pl, pm, pn);
        }
        v.swap(base, pm);
        let (mut pa, mut pb) = (base + 1, base + 1);
        let (mut pc, mut pd) = (base + n - 1, base + n - 1);
        loop {
            while pb <= pc {
                let r = cmp(&v[pb], &v[base]);
                if r > 0 {
                    break;
                }
                if r == 0 {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            // `pc` stays at or above `base`: `pb` starts past it.
            while pb <= pc {
                let r = cmp(&v[pc], &v[base]);
                if r < 0 {
                    break;
                }
                if r == 0 {
                    v.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = base + n;
        let r = (pa - base).min(pb - pa);
        vecswap(v, base, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(v, pb, pn - r, r);
        let left = pb - pa;
        if left > 1 && wanted(base, left, lo, hi) {
            partial(v, cmp, base, left, lo, hi);
        }
        let right = pd - pc;
        if right <= 1 {
            return;
        }
        (base, n) = (pn - right, right);
        if !wanted(base, n, lo, hi) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_key(a: &(u8, u16), b: &(u8, u16)) -> i32 {
        a.0 as i32 - b.0 as i32
    }

    proptest! {
        #[test]
        fn merge_sort_is_stable(mut v in proptest::collection::vec((0u8..8, any::<u16>()), 0..200)) {
            let mut want = v.clone();
            want.sort_by_key(|p| p.0);
            merge_sort(&mut v, &by_key);
            prop_assert_eq!(v, want);
        }

        #[test]
        fn partial_sort_orders_the_asked_ranks(
            mut v in proptest::collection::vec((0u8..50, any::<u16>()), 1..300),
            a in 0usize..300,
            b in 0usize..300,
        ) {
            let (lo, hi) = (a.min(b) % v.len(), a.max(b) % v.len());
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let mut keys: Vec<u8> = v.iter().map(|p| p.0).collect();
            keys.sort();
            let mut all = v.clone();
            partial_sort(&mut v, &by_key, lo, hi);
            let got: Vec<u8> = v[lo..=hi].iter().map(|p| p.0).collect();
            prop_assert_eq!(&got[..], &keys[lo..=hi]);
            // A permutation: nothing lost or duplicated.
            all.sort();
            v.sort();
            prop_assert_eq!(v, all);
        }
    }

    #[test]
    fn nan_does_not_panic() {
        let cmp = |a: &f64, b: &f64| match (a > b, a == b) {
            (true, _) => 1,
            (_, true) => 0,
            _ => -1,
        };
        let mut v: Vec<f64> = (0..100)
            .map(|i| if i % 7 == 0 { f64::NAN } else { i as f64 })
            .collect();
        merge_sort(&mut v.clone(), &cmp);
        partial_sort(&mut v, &cmp, 0, 10);
    }
}
