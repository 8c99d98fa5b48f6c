//! The geo commands answer as redis-server 7.0 answered the same requests
//! on one connection, byte for byte (`REDIS_REPLIES`): scores, positions
//! and 11-character hashes, distances in every unit, the searches with
//! every option (sorting, `COUNT` with and without `ANY`, `STORE` and
//! `STOREDIST`, boxes), points at equal distances in Redis's order,
//! sorted-set scores that are no geohash, and the errors in Redis's
//! order. Beyond the fixture: RESP3's doubles, searches against a
//! brute-force model of the sphere, a restart, and a blocked `BZPOPMIN`
//! woken by `GEOADD` and `GEOSEARCHSTORE`.

use std::io::Read;
use std::time::Duration;

use redis::{cmd, Value};

use crate::common;
use common::{expect_replies, Raw, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"], ":2\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Catania"], "$11\r\n166274.1516\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Catania", "km"], "$8\r\n166.2742\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Catania", "mi"], "$8\r\n103.3182\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Catania", "ft"], "$11\r\n545518.8700\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Catania", "xx"], "-ERR unsupported unit provided. please use M, KM, FT, MI\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Foo"], "$-1\r\n"),
    (&["GEODIST", "nokey", "a", "b"], "$-1\r\n"),
    (&["GEODIST", "Sicily", "Palermo", "Catania", "km", "extra"], "-ERR syntax error\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "100", "km"], "*1\r\n$7\r\nCatania\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km"], "*2\r\n$7\r\nPalermo\r\n$7\r\nCatania\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST"], "*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD"], "*2\r\n*2\r\n$7\r\nPalermo\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*2\r\n$7\r\nCatania\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH"], "*2\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "DESC"], "*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1"], "*1\r\n$7\r\nCatania\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY"], "*1\r\n$7\r\nPalermo\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"], "-ERR the ANY argument requires COUNT argument\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"], "-ERR COUNT must be > 0\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "-1"], "-ERR COUNT must be > 0\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "-1", "km"], "-ERR radius cannot be negative\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "x", "km"], "-ERR need numeric radius\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "1", "parsec"], "-ERR unsupported unit provided. please use M, KM, FT, MI\r\n"),
    (&["GEORADIUS", "Sicily", "200", "37", "1", "km"], "-ERR invalid longitude,latitude pair 200.000000,37.000000\r\n"),
    (&["GEORADIUS", "Sicily", "15", "86", "1", "km"], "-ERR invalid longitude,latitude pair 15.000000,86.000000\r\n"),
    (&["GEORADIUS", "Sicily", "x", "37", "1", "km"], "-ERR value is not a valid float\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst", "WITHDIST"], "-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst"], ":2\r\n"),
    (&["ZRANGE", "dst", "0", "-1", "WITHSCORES"], "*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n"),
    (&["GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst2"], ":2\r\n"),
    (&["ZRANGE", "dst2", "0", "-1", "WITHSCORES"], "*4\r\n$7\r\nCatania\r\n$18\r\n56.441257870158204\r\n$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n"),
    (&["GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "dst3"], "-ERR syntax error\r\n"),
    (&["GEORADIUS", "nokey", "15", "37", "200", "km"], "*0\r\n"),
    (&["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "dst2"], ":0\r\n"),
    (&["EXISTS", "dst2"], ":0\r\n"),
    (&["GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHDIST"], "*2\r\n*2\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n*2\r\n$7\r\nCatania\r\n$8\r\n166.2742\r\n"),
    (&["GEORADIUSBYMEMBER", "Sicily", "Foo", "200", "km"], "-ERR could not decode requested zset member\r\n"),
    (&["GEORADIUSBYMEMBER", "nokey", "Foo", "200", "km"], "*0\r\n"),
    (&["GEORADIUSBYMEMBER", "nokey", "Foo", "200", "km", "WITHDIST", "STORE", "x"], "-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n"),
    (&["GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "100", "km"], "*1\r\n$7\r\nPalermo\r\n"),
    (&["GEOPOS", "Sicily", "Palermo", "Catania", "NonExisting"], "*3\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n*-1\r\n"),
    (&["GEOPOS", "nokey", "a"], "*1\r\n*-1\r\n"),
    (&["GEOHASH", "Sicily", "Palermo", "Catania", "NonExisting"], "*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n"),
    (&["GEOHASH", "nokey", "a"], "*1\r\n$-1\r\n"),
    (&["GEOADD", "Sicily", "13.583333", "37.316667", "Agrigento"], ":1\r\n"),
    (&["GEOADD", "Sicily", "NX", "13.583333", "37.316667", "Agrigento", "1", "1", "New"], ":1\r\n"),
    (&["GEOADD", "Sicily", "XX", "CH", "13.5", "37.3", "Agrigento", "1", "1", "New2"], ":1\r\n"),
    (&["GEOADD", "Sicily", "NX", "XX", "1", "1", "a"], "-ERR syntax error\r\n"),
    (&["GEOADD", "Sicily", "1", "1", "a", "2"], "-ERR syntax error\r\n"),
    (&["GEOADD", "Sicily", "GT", "1", "1", "a"], "-ERR syntax error\r\n"),
    (&["GEOADD", "Sicily", "181", "1", "a"], "-ERR invalid longitude,latitude pair 181.000000,1.000000\r\n"),
    (&["GEOADD", "Sicily", "1", "86", "a"], "-ERR invalid longitude,latitude pair 1.000000,86.000000\r\n"),
    (&["GEOADD", "Sicily", "CH", "CH", "CH"], "-ERR syntax error\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"], "*3\r\n$7\r\nCatania\r\n$9\r\nAgrigento\r\n$7\r\nPalermo\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC", "WITHCOORD", "WITHDIST"], "*3\r\n*3\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n*3\r\n$9\r\nAgrigento\r\n$8\r\n137.1013\r\n*2\r\n$20\r\n13.50000053644180298\r\n$19\r\n37.2999997235943539\r\n*3\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "DESC", "WITHHASH"], "*3\r\n*2\r\n$7\r\nCatania\r\n:3479447370796909\r\n*2\r\n$9\r\nAgrigento\r\n:3479028340915260\r\n*2\r\n$7\r\nPalermo\r\n:3479099956230698\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "100", "km"], "*2\r\n$9\r\nAgrigento\r\n$7\r\nPalermo\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMMEMBER", "Foo", "BYRADIUS", "100", "km"], "-ERR could not decode requested zset member\r\n"),
    (&["GEOSEARCH", "Sicily", "BYRADIUS", "100", "km"], "-ERR wrong number of arguments for 'geosearch' command\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "COUNT", "2"], "-ERR wrong number of arguments for 'geosearch' command\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"], "-ERR syntax error\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"], "-ERR syntax error\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"], "-ERR syntax error\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "-1", "1", "km"], "-ERR height or width cannot be negative\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "x", "1", "km"], "-ERR need numeric width\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "1", "x", "km"], "-ERR need numeric height\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "1", "1", "lightyear"], "-ERR unsupported unit provided. please use M, KM, FT, MI\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STORE", "x"], "-ERR syntax error\r\n"),
    (&["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STOREDIST"], "-ERR syntax error\r\n"),
    (&["GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"], "*0\r\n"),
    (&["GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km", "ANY"], "-ERR the ANY argument requires COUNT argument\r\n"),
    (&["geosearch", "Sicily", "FROMLONLAT", "1", "1", "WITHDIST"], "-ERR wrong number of arguments for 'geosearch' command\r\n"),
    (&["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"], ":3\r\n"),
    (&["ZRANGE", "dst", "0", "-1", "WITHSCORES"], "*6\r\n$9\r\nAgrigento\r\n$16\r\n3479028340915260\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n"),
    (&["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST", "COUNT", "1"], ":1\r\n"),
    (&["ZRANGE", "dst", "0", "-1", "WITHSCORES"], "*2\r\n$7\r\nCatania\r\n$18\r\n56.441257870158204\r\n"),
    (&["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST"], "-ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n"),
    (&["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STORE", "x"], "-ERR syntax error\r\n"),
    (&["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"], ":0\r\n"),
    (&["EXISTS", "dst"], ":0\r\n"),
    (&["SET", "str", "x"], "+OK\r\n"),
    (&["GEOADD", "str", "1", "1", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEOPOS", "str", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEOHASH", "str", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEODIST", "str", "a", "b"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEORADIUS", "str", "1", "1", "1", "km"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEOSEARCH", "str", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEOSEARCHSTORE", "str2", "str", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["GEORADIUS", "str", "1000", "1", "1", "km"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["ZADD", "odd", "-1", "a", "1.5", "b", "1e30", "c", "4503599627370496", "d", "inf", "e", "-inf", "f", "0", "g"], ":7\r\n"),
    (&["GEOPOS", "odd", "a", "b", "c", "d", "e", "f", "g"], "*7\r\n*2\r\n$3\r\n180\r\n$19\r\n85.0511287799999991\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112497791824921\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$19\r\n85.0511287799999991\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n*2\r\n$3\r\n180\r\n$21\r\n-85.05112751263942528\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n"),
    (&["GEOHASH", "odd", "a", "b", "c", "d", "e", "f", "g"], "*7\r\n$11\r\nbp05b5048p0\r\n$11\r\n00bh0hbj210\r\n$11\r\n00bh0hbj200\r\n$11\r\nbp05b5048p0\r\n$11\r\n00bh0hbj200\r\n$11\r\n00bh0hbj200\r\n$11\r\n00bh0hbj200\r\n"),
    (&["GEORADIUS", "odd", "0", "0", "20000", "km", "WITHHASH", "WITHCOORD"], "*2\r\n*3\r\n$1\r\ng\r\n:0\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n*3\r\n$1\r\nb\r\n:1\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112497791824921\r\n"),
    (&["GEOADD", "big", "0", "0", "a", "0", "0", "b", "0", "0", "c", "0.001", "0", "d", "0.001", "0", "e", "180", "85", "f", "-180", "-85", "g"], ":7\r\n"),
    (&["GEORADIUS", "big", "0", "0", "1", "km", "COUNT", "2"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["GEORADIUS", "big", "0", "0", "1", "km", "COUNT", "3", "DESC"], "*3\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\na\r\n"),
    (&["GEORADIUS", "big", "0", "0", "1", "km", "WITHDIST"], "*5\r\n*2\r\n$1\r\na\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nb\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nc\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nd\r\n$6\r\n0.1113\r\n*2\r\n$1\r\ne\r\n$6\r\n0.1113\r\n"),
    (&["GEORADIUS", "big", "0", "0", "1", "km", "DESC", "WITHDIST"], "*5\r\n*2\r\n$1\r\nd\r\n$6\r\n0.1113\r\n*2\r\n$1\r\ne\r\n$6\r\n0.1113\r\n*2\r\n$1\r\na\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nb\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nc\r\n$6\r\n0.0003\r\n"),
    (&["GEORADIUS", "big", "0", "0", "20000", "km", "WITHDIST"], "*6\r\n*2\r\n$1\r\na\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nb\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nc\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nd\r\n$6\r\n0.1113\r\n*2\r\n$1\r\ne\r\n$6\r\n0.1113\r\n*2\r\n$1\r\ng\r\n$10\r\n10566.4985\r\n"),
    (&["GEORADIUS", "big", "0", "0", "0", "km", "WITHDIST"], "*0\r\n"),
    (&["GEOSEARCH", "big", "FROMLONLAT", "0", "0", "BYBOX", "0", "0", "km", "WITHDIST"], "*0\r\n"),
    (&["GEORADIUS", "big", "0", "0", "inf", "km", "WITHDIST"], "*6\r\n*2\r\n$1\r\na\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nb\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nc\r\n$6\r\n0.0003\r\n*2\r\n$1\r\nd\r\n$6\r\n0.1113\r\n*2\r\n$1\r\ne\r\n$6\r\n0.1113\r\n*2\r\n$1\r\ng\r\n$10\r\n10566.4985\r\n"),
    (&["GEOPOS", "big", "f", "g"], "*2\r\n*2\r\n$3\r\n180\r\n$20\r\n84.99999965213439168\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-84.99999965213439168\r\n"),
    (&["GEOADD", "Sicily", "1", "1"], "-ERR wrong number of arguments for 'geoadd' command\r\n"),
    (&["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37"], "-ERR wrong number of arguments for 'geosearchstore' command\r\n"),
];

#[test]
fn geo_commands_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// In RESP3 coordinates are doubles (`,`), distances stay bulk strings.
#[test]
fn resp3_coordinates_are_doubles() {
    let s = Server::start(None);
    let mut c = Raw::new(&s);
    c.send(&[&["hello", "3"]]);
    std::thread::sleep(Duration::from_millis(100));
    let mut hello = [0u8; 4096];
    let _ = c.0.read(&mut hello).unwrap();
    c.send(&[&["geoadd", "Sicily", "13.361389", "38.115556", "Palermo"]]);
    c.expect(":1\r\n");
    c.send(&[&["geopos", "Sicily", "Palermo", "x"]]);
    c.expect("*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n");
    c.send(&[&[
        "geosearch",
        "Sicily",
        "fromlonlat",
        "15",
        "37",
        "byradius",
        "200",
        "km",
        "withdist",
        "withcoord",
    ]]);
    c.expect("*1\r\n*3\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n");
    c.expect_quiet();
}

/// A small deterministic generator (xorshift), so the model test needs
/// no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

/// Haversine on Redis's Earth radius, written from the formula.
fn haversine(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lat2) = (a.1.to_radians(), b.1.to_radians());
    let dlat = lat2 - lat1;
    let dlon = (b.0 - a.0).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6372797.560856 * h.sqrt().asin()
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).unwrap(),
        other => panic!("not a bulk string: {other:?}"),
    }
}

/// Every search finds exactly the stored points within its radius (at
/// their stored positions, as `GEOPOS` gives them), nearest first, and
/// `COUNT n` the `n` nearest.
#[test]
fn searches_find_what_a_model_of_the_sphere_finds() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for round in 0..6 {
        let key = format!("g{round}");
        let spread = [0.05, 0.5, 3.0, 20.0, 60.0, 0.001][round];
        let center = (rng.range(-170.0, 170.0), rng.range(-70.0, 70.0));
        let mut add = cmd("GEOADD");
        add.arg(&key);
        for i in 0..300 {
            let lon = (center.0 + rng.range(-spread, spread)).clamp(-180.0, 180.0);
            let lat = (center.1 + rng.range(-spread, spread) / 2.0).clamp(-85.0, 85.0);
            add.arg(lon).arg(lat).arg(format!("m{i}"));
        }
        let _: i64 = add.query(&mut c).unwrap();
        let mut pos = cmd("GEOPOS");
        pos.arg(&key);
        (0..300).for_each(|i| {
            pos.arg(format!("m{i}"));
        });
        let stored: Vec<Vec<String>> = pos.query(&mut c).unwrap();
        let stored: Vec<(f64, f64)> = stored
            .iter()
            .map(|p| (p[0].parse().unwrap(), p[1].parse().unwrap()))
            .collect();
        for radius_km in [1.0, 10.0, 100.0, 500.0, 2000.0] {
            let reply: Vec<Vec<Value>> = cmd("GEORADIUS")
                .arg(&key)
                .arg(center.0)
                .arg(center.1)
                .arg(radius_km)
                .arg("km")
                .arg("WITHDIST")
                .arg("ASC")
                .query(&mut c)
                .unwrap();
            let found: Vec<(String, f64)> = reply
                .iter()
                .map(|r| (text(&r[0]), text(&r[1]).parse().unwrap()))
                .collect();
            assert!(
                found.windows(2).all(|w| w[0].1 <= w[1].1),
                "not nearest first"
            );
            let names: std::collections::HashSet<&str> =
                found.iter().map(|(m, _)| m.as_str()).collect();
            for (i, p) in stored.iter().enumerate() {
                let d = haversine(center, *p) / 1000.0;
                let member = format!("m{i}");
                // Points within a millimeter of the edge may fall either way.
                if (d - radius_km).abs() < 1e-6 {
                    continue;
                }
                assert_eq!(
                    names.contains(member.as_str()),
                    d <= radius_km,
                    "round {round} radius {radius_km} {member} at {d} km"
                );
            }
            for (m, dist) in &found {
                let i: usize = m[1..].parse().unwrap();
                assert!((haversine(center, stored[i]) / 1000.0 - dist).abs() < 1e-3);
            }
            let nearest: Vec<String> = cmd("GEORADIUS")
                .arg(&key)
                .arg(center.0)
                .arg(center.1)
                .arg(radius_km)
                .arg("km")
                .arg("COUNT")
                .arg(5)
                .query(&mut c)
                .unwrap();
            let want: Vec<&str> = found.iter().take(5).map(|(m, _)| m.as_str()).collect();
            let dist_of = |m: &str| found.iter().find(|(n, _)| n == m).map(|(_, d)| *d);
            assert_eq!(nearest.len(), want.len());
            for (got, want) in nearest.iter().zip(&want) {
                // Equal distances may order either way between the two.
                assert_eq!(dist_of(got), dist_of(want));
            }
        }
    }
}

/// A geo set is a sorted set on disk like any other: it survives a
/// restart with its scores.
#[test]
fn geo_sets_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        let added: i64 = cmd("GEOADD")
            .arg(&[
                "Sicily",
                "13.361389",
                "38.115556",
                "Palermo",
                "15.087269",
                "37.502669",
                "Catania",
            ])
            .query(&mut c)
            .unwrap();
        assert_eq!(added, 2);
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db, |_| {});
    let mut c = s.conn();
    let d: String = cmd("GEODIST")
        .arg(&["Sicily", "Palermo", "Catania", "km"])
        .query(&mut c)
        .unwrap();
    assert_eq!(d, "166.2742");
    let kind: String = cmd("TYPE").arg("Sicily").query(&mut c).unwrap();
    assert_eq!(kind, "zset");
    let scores: Vec<String> = cmd("ZRANGE")
        .arg(&["Sicily", "0", "-1", "WITHSCORES"])
        .query(&mut c)
        .unwrap();
    assert_eq!(
        scores,
        ["Palermo", "3479099956230698", "Catania", "3479447370796909"]
    );
}

/// GEOADD and GEOSEARCHSTORE add members, so they serve a `BZPOPMIN`
/// waiting on their key.
#[test]
fn geo_writes_wake_a_blocked_pop() {
    let s = Server::start(None);
    let mut other = s.conn();
    let _: i64 = cmd("GEOADD")
        .arg(&["src", "1", "1", "a"])
        .query(&mut other)
        .unwrap();
    for (i, write) in [
        vec!["GEOADD", "q", "2", "2", "b"],
        vec![
            "GEOSEARCHSTORE",
            "q",
            "src",
            "FROMLONLAT",
            "1",
            "1",
            "BYRADIUS",
            "10",
            "km",
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = s.conn();
        let waiter = std::thread::spawn(move || -> Option<(String, String, String)> {
            cmd("BZPOPMIN").arg("q").arg(5).query(&mut c).unwrap()
        });
        common::wait_blocked(&mut other, 1);
        let _: i64 = cmd(write[0]).arg(&write[1..]).query(&mut other).unwrap();
        let (key, member, _) = waiter.join().unwrap().expect("woken");
        assert_eq!((key.as_str(), member.as_str()), ("q", ["b", "a"][i]));
    }
}

/// A `WATCH`ed geo set changed by another client's `GEOADD` aborts the
/// transaction; `GEOADD` inside `MULTI` applies at `EXEC`.
#[test]
fn geoadd_takes_part_in_transactions() {
    let s = Server::start(None);
    let (mut c, mut other) = (s.conn(), s.conn());
    let _: () = cmd("WATCH").arg("g").query(&mut c).unwrap();
    let _: i64 = cmd("GEOADD")
        .arg(&["g", "1", "1", "a"])
        .query(&mut other)
        .unwrap();
    let _: () = cmd("MULTI").query(&mut c).unwrap();
    let _: () = cmd("GEOADD")
        .arg(&["g", "2", "2", "b"])
        .query(&mut c)
        .unwrap();
    let exec: Value = cmd("EXEC").query(&mut c).unwrap();
    assert_eq!(exec, Value::Nil);
    let _: () = cmd("MULTI").query(&mut c).unwrap();
    let _: () = cmd("GEOADD")
        .arg(&["g", "2", "2", "b"])
        .query(&mut c)
        .unwrap();
    let exec: Vec<i64> = cmd("EXEC").query(&mut c).unwrap();
    assert_eq!(exec, [1]);
    let n: i64 = cmd("ZCARD").arg("g").query(&mut c).unwrap();
    assert_eq!(n, 2);
}
