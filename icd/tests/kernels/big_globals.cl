// language: -cl-std=CL3.0
// 128 program-scope arrays of 4 MiB each: 512 MiB of zeroed data the JIT allocates while the
// program is built, one array at a time (out_of_memory.rs runs out of address space midway).
#define BIG(n) global int big##n[1 << 20];
#define BIG8(n) BIG(n##0) BIG(n##1) BIG(n##2) BIG(n##3) BIG(n##4) BIG(n##5) BIG(n##6) BIG(n##7)
BIG8(0) BIG8(1) BIG8(2) BIG8(3) BIG8(4) BIG8(5) BIG8(6) BIG8(7)
BIG8(8) BIG8(9) BIG8(10) BIG8(11) BIG8(12) BIG8(13) BIG8(14) BIG8(15)

#define AT(n) big##n[i]
#define SUM8(n) (AT(n##0) + AT(n##1) + AT(n##2) + AT(n##3) + AT(n##4) + AT(n##5) + AT(n##6) + AT(n##7))

kernel void sum_all(global int *out, int i) {
    out[0] = SUM8(0) + SUM8(1) + SUM8(2) + SUM8(3) + SUM8(4) + SUM8(5) + SUM8(6) + SUM8(7)
           + SUM8(8) + SUM8(9) + SUM8(10) + SUM8(11) + SUM8(12) + SUM8(13) + SUM8(14) + SUM8(15);
    big150[i] = 1;
}
