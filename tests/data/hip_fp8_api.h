// Declarations of the part of ROCm's <hip/hip_fp8.h> (ROCm 6.2+) that portlint's PTL307 rewrite
// uses: the four FP8 types, constructible from float and convertible back. Written for the
// oracle test from the documented API (types and member names only; no implementation), so
// a HIP that predates hip_fp8.h (Debian's 5.2) can still type-check the rewrite.
// Both conversions are declared explicit, the stricter reading: code that compiles here
// compiles whether the real header's conversions are explicit or not.
#pragma once

typedef unsigned char __hip_fp8_storage_t;

#define PORTLINT_DECLARE_HIP_FP8(NAME)                         \
  struct NAME {                                                \
    __hip_fp8_storage_t __x;                                   \
    __host__ __device__ NAME() = default;                      \
    __host__ __device__ explicit NAME(float f);                \
    __host__ __device__ explicit operator float() const;       \
  };

PORTLINT_DECLARE_HIP_FP8(__hip_fp8_e4m3_fnuz)
PORTLINT_DECLARE_HIP_FP8(__hip_fp8_e5m2_fnuz)
PORTLINT_DECLARE_HIP_FP8(__hip_fp8_e4m3)
PORTLINT_DECLARE_HIP_FP8(__hip_fp8_e5m2)

#undef PORTLINT_DECLARE_HIP_FP8
