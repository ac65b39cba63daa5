// Launch overhead: a one-work-item kernel that counts its launches.
__kernel void tiny(__global uint* counter) {
    counter[0] += 1;
}
