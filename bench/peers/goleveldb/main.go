// Command memdb-bench runs the goleveldb memdb workload of
// syndtr/goleveldb PR #387 (4,194,304 puts of 32-byte keys with 32-, 96- and
// 256-byte values into a memdb.DB, then gets) and prints db_bench-format
// lines plus ns/op, so it lines up with
//
//	slsm bench --benchmarks=fillrandom_mem,readrandom_mem --key_size=32 --value_size=V --num=4194304
//
// With -keys=dbbench (the default) the keys are exactly the ones slsm bench
// generates with --seed=0: db_bench's GenerateKeyFromInt of integers drawn
// uniformly from [0,num) by the same xoshiro256** generator and seeds (fill
// thread seed 1000, read thread seed 1002 + 1<<32). With -keys=random they are 32
// uniformly random bytes, as in the PR.
package main

import (
	"flag"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/syndtr/goleveldb/leveldb/comparer"
	"github.com/syndtr/goleveldb/leveldb/memdb"
)

// rng is xoshiro256** seeded through splitmix64, as slsm_cli::bench::keygen::Rng.
type rng struct{ s [4]uint64 }

func newRng(seed uint64) *rng {
	sm := seed
	next := func() uint64 {
		sm += 0x9E3779B97F4A7C15
		z := sm
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		return z ^ (z >> 31)
	}
	r := &rng{}
	for i := range r.s {
		r.s[i] = next()
	}
	return r
}

func (r *rng) next() uint64 {
	s := &r.s
	result := bits.RotateLeft64(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return result
}

// uniform returns a value in [0,n) by multiply-shift.
func (r *rng) uniform(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// dbBenchKey writes db_bench's key for v: the low min(len,8) bytes of v
// big-endian, then '0' padding.
func dbBenchKey(v uint64, buf []byte) {
	fill := len(buf)
	if fill > 8 {
		fill = 8
	}
	for i := 0; i < fill; i++ {
		buf[i] = byte(v >> (uint(fill-i-1) * 8))
	}
	for i := fill; i < len(buf); i++ {
		buf[i] = '0'
	}
}

func line(name string, ops int, elapsed time.Duration, bytes int64, msg string) string {
	secs := elapsed.Seconds()
	extra := ""
	if bytes > 0 {
		extra = fmt.Sprintf(" %6.1f MB/s", float64(bytes)/1048576.0/secs)
	}
	if msg != "" {
		extra += " " + msg
	}
	return fmt.Sprintf("%-12s : %11.3f micros/op %d ops/sec %.3f seconds %d operations;%s",
		name, secs*1e6/float64(ops), int64(float64(ops)/secs), secs, ops, extra)
}

func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return fmt.Sprintf("%.1f MB", kb/1024)
			}
		}
	}
	return "?"
}

func run(num, reads, keySize, valueSize int, keys string, seed uint64) {
	db := memdb.New(comparer.DefaultComparer, num*(keySize+valueSize))
	value := make([]byte, valueSize)
	vr := newRng(seed + 301)
	for i := range value {
		value[i] = byte(' ' + vr.uniform(95))
	}

	fmt.Printf("memdb %dx%d, %d puts, %d gets, keys=%s\n", keySize, valueSize, num, reads, keys)
	key := make([]byte, keySize)
	r := newRng(seed + 1000)
	start := time.Now()
	for i := 0; i < num; i++ {
		if keys == "random" {
			for j := 0; j < keySize; j += 8 {
				x := r.next()
				for b := j; b < j+8 && b < keySize; b++ {
					key[b] = byte(x >> (uint(b-j) * 8))
				}
			}
		} else {
			dbBenchKey(r.uniform(uint64(num)), key)
		}
		if err := db.Put(key, value); err != nil {
			fmt.Fprintln(os.Stderr, "put:", err)
			os.Exit(1)
		}
	}
	putTime := time.Since(start)
	fmt.Println(line("fillrandom_mem", num, putTime, int64(num)*int64(keySize+valueSize), ""))

	r = newRng(seed + 1002 + 1<<32)
	if keys == "random" {
		r = newRng(seed + 1000) // replay the inserted keys
	}
	found := 0
	var bytesRead int64
	start = time.Now()
	for i := 0; i < reads; i++ {
		if keys == "random" {
			for j := 0; j < keySize; j += 8 {
				x := r.next()
				for b := j; b < j+8 && b < keySize; b++ {
					key[b] = byte(x >> (uint(b-j) * 8))
				}
			}
		} else {
			dbBenchKey(r.uniform(uint64(num)), key)
		}
		v, err := db.Get(key)
		if err == nil {
			found++
			bytesRead += int64(keySize + len(v))
		}
	}
	getTime := time.Since(start)
	fmt.Println(line("readrandom_mem", reads, getTime, bytesRead,
		fmt.Sprintf("(%d of %d found)", found, reads)))
	fmt.Printf("memdb %dx%d: put %.1f ns/op, get %.1f ns/op, total %.2f s\n",
		keySize, valueSize,
		float64(putTime.Nanoseconds())/float64(num),
		float64(getTime.Nanoseconds())/float64(reads),
		(putTime + getTime).Seconds())
}

func main() {
	num := flag.Int("num", 4194304, "puts per value size")
	reads := flag.Int("reads", -1, "gets per value size (-1 = num)")
	keySize := flag.Int("key_size", 32, "key bytes")
	valueSizes := flag.String("value_sizes", "32,96,256", "comma-separated value sizes")
	keys := flag.String("keys", "dbbench", "key generation: dbbench (same keys as slsm bench) or random (32 random bytes, as in the PR)")
	seed := flag.Uint64("seed", 0, "seed base (as slsm bench --seed)")
	flag.Parse()
	if *reads < 0 {
		*reads = *num
	}
	if *keys != "dbbench" && *keys != "random" {
		fmt.Fprintln(os.Stderr, "-keys must be dbbench or random")
		os.Exit(2)
	}
	for _, vs := range strings.Split(*valueSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(vs))
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "bad value size %q\n", vs)
			os.Exit(2)
		}
		run(*num, *reads, *keySize, n, *keys, *seed)
		runtime.GC()
	}
	fmt.Printf("Peak RSS:   %s (VmHWM)\n", peakRSS())
}
