__global__ void k(unsigned* o) {
  asm volatile("membar.gl;");
  o[0] = 1u;
}
