module slsm.invalid/bench/peers/goleveldb

go 1.21

require github.com/syndtr/goleveldb v1.0.0
