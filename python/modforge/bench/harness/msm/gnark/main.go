// The gnark-crypto anchor of `modforge bench msm` (ours; built into the benchmark cache on first use).
//
//	msm-gnark POINTS SCALARS THREADS REPEATS
//
// POINTS: 96-byte raw points (x || y big-endian, 0x40 in the first byte for infinity); SCALARS:
// 32-byte big-endian scalars.  Prints `ms T` per repeat, then `x 0x..` and `y 0x..` (or `infinity`).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-377"
	"github.com/consensys/gnark-crypto/ecc/bls12-377/fr"
)

func die(msg string) {
	fmt.Fprintln(os.Stderr, "msm-gnark:", msg)
	os.Exit(2)
}

func main() {
	if len(os.Args) != 5 {
		die("usage: msm-gnark POINTS SCALARS THREADS REPEATS")
	}
	pb, err := os.ReadFile(os.Args[1])
	if err != nil {
		die(err.Error())
	}
	sb, err := os.ReadFile(os.Args[2])
	if err != nil {
		die(err.Error())
	}
	threads, _ := strconv.Atoi(os.Args[3])
	repeats, _ := strconv.Atoi(os.Args[4])
	if len(pb)%96 != 0 || len(sb)%32 != 0 || len(pb)/96 != len(sb)/32 {
		die("file sizes do not match")
	}
	n := len(pb) / 96
	points := make([]bls.G1Affine, n)
	scalars := make([]fr.Element, n)
	for i := 0; i < n; i++ {
		b := pb[96*i : 96*i+96]
		if b[0]&0xe0 == 0x40 {
			continue // the zero value is gnark's affine infinity
		}
		points[i].X.SetBytes(b[:48])
		points[i].Y.SetBytes(b[48:])
		if !points[i].IsOnCurve() {
			die(fmt.Sprintf("point %d is not on the curve", i))
		}
		scalars[i].SetBytes(sb[32*i : 32*i+32])
	}
	for i := 0; i < n; i++ {
		scalars[i].SetBytes(sb[32*i : 32*i+32])
	}
	var r bls.G1Jac
	for k := 0; k < repeats; k++ {
		t := time.Now()
		if _, err := r.MultiExp(points, scalars, ecc.MultiExpConfig{NbTasks: threads}); err != nil {
			die(err.Error())
		}
		fmt.Printf("ms %.3f\n", float64(time.Since(t).Nanoseconds())/1e6)
	}
	var a bls.G1Affine
	a.FromJacobian(&r)
	if a.IsInfinity() {
		fmt.Println("infinity")
		return
	}
	x := a.X.Bytes()
	y := a.Y.Bytes()
	fmt.Printf("x 0x%x\ny 0x%x\n", x[:], y[:])
}
