// SPDX-License-Identifier: Apache-2.0
// IEEE 754 binary16 (FP16) conversions for codecs; engines keep FP16 as raw
// bits. Pure functions.
#ifndef FERRY_CORE_HALF_H_
#define FERRY_CORE_HALF_H_

#include <cstdint>

namespace ferry {

// Rounds to nearest, ties to even; overflow becomes infinity; NaN stays NaN.
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);

}  // namespace ferry

#endif  // FERRY_CORE_HALF_H_
