//! The area a geo search covers, as Redis 7.0's `geohash_helper.c`
//! computes it: the bounding box of a circle or a rectangle on the
//! sphere, the step whose nine boxes cover it, which of those boxes can
//! hold a match, and haversine distances on Redis's Earth radius.

use super::hash::{decode, encode_wgs84, neighbour, Hash};

const D_R: f64 = std::f64::consts::PI / 180.0;
/// Earth's quadratic mean radius for WGS-84, as Redis has it.
const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;

/// What a search covers: a circle of `radius`, or a box `width` by
/// `height`, around `center` (longitude, latitude), in units of
/// `conversion` meters.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    Circle { radius: f64 },
    Box { width: f64, height: f64 },
}

#[derive(Clone, Copy, Debug)]
pub struct Search {
    pub center: [f64; 2],
    pub conversion: f64,
    pub shape: Shape,
}

/// `geohashEstimateStepsByRadius`.
fn steps_for_radius(mut range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

impl Search {
    /// `geohashBoundingBox`: min longitude, min latitude, max longitude,
    /// max latitude.
    fn bounds(&self) -> [f64; 4] {
        let [longitude, latitude] = self.center;
        let (height, width) = match self.shape {
            Shape::Circle { radius } => (radius, radius),
            Shape::Box { width, height } => (height / 2.0, width / 2.0),
        };
        let (height, width) = (self.conversion * height, self.conversion * width);
        let lat_delta = (height / EARTH_RADIUS_IN_METERS) / D_R;
        let long_delta = |at: f64| (width / EARTH_RADIUS_IN_METERS / (at * D_R).cos()) / D_R;
        let long_delta_top = long_delta(latitude + lat_delta);
        let long_delta_bottom = long_delta(latitude - lat_delta);
        let delta = match latitude < 0.0 {
            true => long_delta_bottom,
            false => long_delta_top,
        };
        [
            longitude - delta,
            latitude - lat_delta,
            longitude + delta,
            latitude + lat_delta,
        ]
    }

    /// The boxes to read (`geohashCalculateAreasByShapeWGS84`, then
    /// `membersOfAllNeighbors`'s order): the center's, then north, south,
    /// east, west, north-east, north-west, south-east, south-west; a box
    /// the search cannot reach is the zero hash.
    pub fn boxes(&self) -> [Hash; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let [longitude, latitude] = self.center;
        let radius_meters = match self.shape {
            Shape::Circle { radius } => radius,
            Shape::Box { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        } * self.conversion;
        let mut steps = steps_for_radius(radius_meters, latitude);
        let at = |steps| encode_wgs84(longitude, latitude, steps).unwrap_or_default();
        let mut hash = at(steps);
        let area_of = |h: Hash| decode(h).unwrap_or_default();
        let too_coarse = {
            let north = area_of(neighbour(hash, 0, 1));
            let south = area_of(neighbour(hash, 0, -1));
            let east = area_of(neighbour(hash, 1, 0));
            let west = area_of(neighbour(hash, -1, 0));
            north.latitude.max < max_lat
                || south.latitude.min > min_lat
                || east.longitude.max < max_lon
                || west.longitude.min > min_lon
        };
        if steps > 1 && too_coarse {
            steps -= 1;
            hash = at(steps);
        }
        let area = area_of(hash);
        // Written as Redis's tests, so a NaN bound (an infinite radius)
        // drops the same boxes.
        let prune = steps >= 2;
        let south = !(prune && area.latitude.min < min_lat);
        let north = !(prune && area.latitude.max > max_lat);
        let west = !(prune && area.longitude.min < min_lon);
        let east = !(prune && area.longitude.max > max_lon);
        let keep = |wanted: bool, dx: i8, dy: i8| match wanted {
            true => neighbour(hash, dx, dy),
            false => Hash::default(),
        };
        [
            hash,
            keep(north, 0, 1),
            keep(south, 0, -1),
            keep(east, 1, 0),
            keep(west, -1, 0),
            keep(north && east, 1, 1),
            keep(north && west, -1, 1),
            keep(south && east, 1, -1),
            keep(south && west, -1, -1),
        ]
    }

    /// The distance from the center to `point` in meters, if the point is
    /// inside the shape (`geoWithinShape`).
    pub fn distance_within(&self, point: [f64; 2]) -> Option<f64> {
        let [x1, y1] = self.center;
        let [x2, y2] = point;
        match self.shape {
            Shape::Circle { radius } => {
                let d = distance(x1, y1, x2, y2);
                // Redis drops a point only when `d > radius`: a NaN
                // distance (nearly antipodal points) is kept.
                match d.partial_cmp(&(radius * self.conversion)) {
                    Some(std::cmp::Ordering::Greater) => None,
                    _ => Some(d),
                }
            }
            Shape::Box { width, height } => {
                let (width_m, height_m) = (width * self.conversion, height * self.conversion);
                if lat_distance(y2, y1) > height_m / 2.0 {
                    return None;
                }
                if distance(x2, y2, x1, y2) > width_m / 2.0 {
                    return None;
                }
                Some(distance(x1, y1, x2, y2))
            }
        }
    }
}

/// The first and the last (exclusive) score of the points in box `hash`.
pub fn score_range(hash: Hash) -> (u64, u64) {
    let next = Hash {
        bits: hash.bits.wrapping_add(1),
        step: hash.step,
    };
    (hash.align52(), next.align52())
}

fn lat_distance(lat1d: f64, lat2d: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (lat2d * D_R - lat1d * D_R).abs()
}

/// Haversine distance in meters (`geohashGetDistance`).
pub fn distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let (lon1r, lon2r) = (lon1d * D_R, lon2d * D_R);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1d, lat2d);
    }
    let (lat1r, lat2r) = (lat1d * D_R, lat2d * D_R);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

#[cfg(test)]
mod tests {
    use super::super::hash::decode_score;
    use super::*;

    #[test]
    fn distance_is_redis_haversine() {
        let [x1, y1] = decode_score(3479099956230698.0);
        let [x2, y2] = decode_score(3479447370796909.0);
        // GEODIST Sicily Palermo Catania: "166274.1516".
        assert_eq!(format!("{:.4}", distance(x1, y1, x2, y2)), "166274.1516");
    }
}
