//! Geohashes as Redis 7.0 computes them (`geohash.c`): 26 steps of
//! interleaved latitude/longitude bits over Web Mercator's latitude
//! limits, a box's neighbours, and the standard 11-character string.
//!
//! A port, not a geohash crate: a point's score, the boxes a search reads
//! and the distances it prints must be Redis's to the last bit, so the
//! same operations run in the same order (C's `double` is Rust's `f64`,
//! and `sin`, `cos`, `asin` are the platform's libm in both).

/// Bits per coordinate in a stored score (26 * 2 = 52 bits).
pub const STEP_MAX: u8 = 26;
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;

/// A geohash of `step` bits per coordinate (`step` 0: no box).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hash {
    pub bits: u64,
    pub step: u8,
}

impl Hash {
    fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The hash as a 52-bit score (`geohashAlign52Bits`).
    pub fn align52(self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

/// The box a hash covers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Area {
    pub longitude: Range,
    pub latitude: Range,
}

const WGS84_LONG: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
const WGS84_LAT: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};
/// The standard geohash's ranges (`GEOHASH`'s strings).
pub const STANDARD_LAT: Range = Range {
    min: -90.0,
    max: 90.0,
};

/// `x`'s and `y`'s low 32 bits interleaved, `x` in the even positions.
fn interleave64(x: u32, y: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The even bits in the low half, the odd bits in the high half.
fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let (mut x, mut y) = (interleaved, interleaved >> 1);
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// `geohashEncode`: `None` outside Redis's limits.
pub fn encode(
    long_range: Range,
    lat_range: Range,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<Hash> {
    if step > 32 || step == 0 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    let scale = (1u64 << step) as f64;
    Some(Hash {
        bits: interleave64((lat_offset * scale) as u32, (long_offset * scale) as u32),
        step,
    })
}

/// A point's 26-step hash over Redis's ranges.
pub fn encode_wgs84(longitude: f64, latitude: f64, step: u8) -> Option<Hash> {
    encode(WGS84_LONG, WGS84_LAT, longitude, latitude, step)
}

/// `geohashDecode` over Redis's ranges: `None` for the zero hash.
pub fn decode(hash: Hash) -> Option<Area> {
    if hash.is_zero() {
        return None;
    }
    let sep = deinterleave64(hash.bits);
    let (lat_scale, long_scale) = (
        WGS84_LAT.max - WGS84_LAT.min,
        WGS84_LONG.max - WGS84_LONG.min,
    );
    let ilato = sep as u32;
    let ilono = (sep >> 32) as u32;
    let cells = (1u64 << hash.step) as f64;
    let at = |i: u32| f64::from(i) * 1.0 / cells;
    Some(Area {
        latitude: Range {
            min: WGS84_LAT.min + at(ilato) * lat_scale,
            max: WGS84_LAT.min + at(ilato.wrapping_add(1)) * lat_scale,
        },
        longitude: Range {
            min: WGS84_LONG.min + at(ilono) * long_scale,
            max: WGS84_LONG.min + at(ilono.wrapping_add(1)) * long_scale,
        },
    })
}

/// The point a stored score stands for (`decodeGeohash`): the middle of
/// its cell, clamped to the limits. Any score decodes, as in Redis.
pub fn decode_score(score: f64) -> [f64; 2] {
    let hash = Hash {
        bits: c_double_to_u64(score),
        step: STEP_MAX,
    };
    let area = decode(hash).unwrap_or_default();
    let x = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let y = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    [x, y]
}

/// C's `(uint64_t)` of a double as x86-64 compilers emit it (a score
/// that is not a geohash still decodes to some point, the same one as in
/// Redis): truncation in range; the hardware's "indefinite" value past it.
fn c_double_to_u64(x: f64) -> u64 {
    const TWO63: f64 = 9223372036854775808.0;
    const INDEFINITE: u64 = 1 << 63;
    let truncate = |v: f64| match v.is_nan() || !(-TWO63..TWO63).contains(&v) {
        true => INDEFINITE,
        false => v as i64 as u64,
    };
    match x < TWO63 {
        true => truncate(x),
        false => truncate(x - TWO63) ^ INDEFINITE,
    }
}

/// C's `(long long)` of a double as x86-64 compilers emit it: truncation
/// in range, `i64::MIN` (the hardware's "indefinite" value) past it.
pub fn c_double_to_i64(x: f64) -> i64 {
    match (-9.223372036854776e18..9.223372036854776e18).contains(&x) {
        true => x as i64,
        false => i64::MIN,
    }
}

/// Longitude bits sit in the odd positions, latitude bits in the even.
const LONG_BITS: u64 = 0xaaaaaaaaaaaaaaaa;
const LAT_BITS: u64 = 0x5555555555555555;

/// `hash` moved one box up (`d` > 0) or down along the coordinate whose
/// bits are `axis` (`geohash_move_x`/`_y`): the coordinate's bits count
/// with the other's filled in as carries, and wrap around.
fn step_along(hash: &mut Hash, d: i8, axis: u64) {
    let shift = 64 - u32::from(hash.step) * 2;
    let mut mine = hash.bits & axis;
    let other = hash.bits & !axis;
    let carries = !axis >> shift;
    mine = match d > 0 {
        true => mine.wrapping_add(carries + 1),
        false => (mine | carries).wrapping_sub(carries + 1),
    };
    hash.bits = (mine & (axis >> shift)) | other;
}

/// `hash` moved `dx` boxes east and `dy` north (each -1, 0 or 1).
pub(super) fn neighbour(hash: Hash, dx: i8, dy: i8) -> Hash {
    let mut h = hash;
    if dx != 0 {
        step_along(&mut h, dx, LONG_BITS);
    }
    if dy != 0 {
        step_along(&mut h, dy, LAT_BITS);
    }
    h
}

/// The 11-character standard geohash of a stored score (`GEOHASH`).
pub fn standard_string(score: f64) -> Option<[u8; 11]> {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let [x, y] = decode_score(score);
    let hash = encode(WGS84_LONG, STANDARD_LAT, x, y, STEP_MAX)?;
    let mut out = [ALPHABET[0]; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = ALPHABET[((hash.bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_round_trips() {
        for (x, y) in [
            (0, 0),
            (1, 0),
            (0, 1),
            (0xFFFF_FFFF, 0x1234_5678),
            (12345, 67108863),
        ] {
            let sep = deinterleave64(interleave64(x, y));
            assert_eq!((sep as u32, (sep >> 32) as u32), (x, y));
        }
    }

    #[test]
    fn palermo_scores_as_redis_does() {
        // GEOADD Sicily 13.361389 38.115556 Palermo stores this score,
        // and GEOPOS answers this point (redis-server 7.0).
        let hash = encode_wgs84(13.361389, 38.115556, STEP_MAX).unwrap();
        assert_eq!(hash.align52(), 3479099956230698);
        let [x, y] = decode_score(3479099956230698.0);
        assert_eq!(format!("{x:.17}"), "13.36138933897018433");
        assert_eq!(format!("{y:.17}"), "38.11555639549629859");
        assert_eq!(
            &standard_string(3479099956230698.0).unwrap(),
            b"sqc8b49rny0"
        );
    }

    #[test]
    fn out_of_limits_does_not_encode() {
        assert!(encode_wgs84(181.0, 0.0, STEP_MAX).is_none());
        assert!(encode_wgs84(0.0, 85.06, STEP_MAX).is_none());
        assert!(encode_wgs84(0.0, 0.0, 0).is_none());
    }

    #[test]
    fn odd_scores_convert_as_x86_does() {
        assert_eq!(c_double_to_u64(-1.0), u64::MAX);
        assert_eq!(c_double_to_u64(f64::INFINITY), 0);
        assert_eq!(c_double_to_u64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(c_double_to_u64(1.9), 1);
        assert_eq!(c_double_to_u64(1e19), 10_000_000_000_000_000_000);
    }

    #[test]
    fn neighbours_step_one_box() {
        let h = encode_wgs84(10.0, 10.0, 10).unwrap();
        let east = decode(neighbour(h, 1, 0)).unwrap();
        let here = decode(h).unwrap();
        assert_eq!(east.longitude.min, here.longitude.max);
        let north = decode(neighbour(h, 0, 1)).unwrap();
        assert_eq!(north.latitude.min, here.latitude.max);
        let sw = decode(neighbour(h, -1, -1)).unwrap();
        assert_eq!(sw.latitude.max, here.latitude.min);
        assert_eq!(sw.longitude.max, here.longitude.min);
    }
}
