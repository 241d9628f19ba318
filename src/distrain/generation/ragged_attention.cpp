// The decoding rows' attention on CPU, each row over its own length (distrain.generation.ragged_attention).
//
// queries: rows x heads x dim, float32, already scaled; key, value: a layer's slots (slots x kv heads x
// capacity x dim, contiguous, float32, bfloat16 or float16); row r reads slot slots[r]'s first lengths[r]
// positions. Returns rows x heads x dim in float32. Each (row, kv head) reads its keys and values once, for
// every query head of its group; scores and the softmax are float32. Built by torch.utils.cpp_extension at
// first use, for this machine's CPU (-march=native), and registered as torch.ops.distrain.ragged_decode_attention.
#include <torch/library.h>
#include <ATen/ATen.h>

#include <ATen/Parallel.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

inline float widen(float x) { return x; }
inline float widen(c10::Half x) { return static_cast<float>(x); }
inline float widen(c10::BFloat16 x) {  // the top half of a float32: a shift the compiler vectorises
  const uint32_t bits = static_cast<uint32_t>(x.x) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

template <typename T>
void attend_rows(const float* queries, const T* key, const T* value, const int64_t* slots, const int64_t* lengths,
                 float* out, int64_t rows, int64_t heads, int64_t kv_heads, int64_t capacity, int64_t dim) {
  const int64_t group = heads / kv_heads;
  at::parallel_for(0, rows * kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t row = item / kv_heads, kv = item % kv_heads, length = lengths[row];
      const int64_t offset = (slots[row] * kv_heads + kv) * capacity * dim;
      const T* keys = key + offset;
      const T* values = value + offset;
      const float* query = queries + (row * heads + kv * group) * dim;
      float* attended = out + (row * heads + kv * group) * dim;
      scores.resize(group * length);
      for (int64_t p = 0; p < length; ++p) {  // scores: each key once, for every head of the group
        const T* k = keys + p * dim;
        for (int64_t h = 0; h < group; ++h) {
          const float* q = query + h * dim;
          float dot = 0.f;
#pragma omp simd reduction(+ : dot)
          for (int64_t d = 0; d < dim; ++d) dot += q[d] * widen(k[d]);
          scores[h * length + p] = dot;
        }
      }
      for (int64_t h = 0; h < group; ++h) {  // softmax over the row's own length
        float* s = scores.data() + h * length;
        float highest = -INFINITY;
        for (int64_t p = 0; p < length; ++p) highest = s[p] > highest ? s[p] : highest;
        float total = 0.f;
        for (int64_t p = 0; p < length; ++p) total += (s[p] = std::exp(s[p] - highest));
        const float scale = 1.f / total;
        for (int64_t p = 0; p < length; ++p) s[p] *= scale;
        std::memset(attended + h * dim, 0, dim * sizeof(float));
      }
      for (int64_t p = 0; p < length; ++p) {  // the weighted values: each value once
        const T* v = values + p * dim;
        for (int64_t h = 0; h < group; ++h) {
          const float weight = scores[h * length + p];
          float* o = attended + h * dim;
#pragma omp simd
          for (int64_t d = 0; d < dim; ++d) o[d] += weight * widen(v[d]);
        }
      }
    }
  });
}

at::Tensor attend(const at::Tensor& queries, const at::Tensor& key, const at::Tensor& value,
                     const at::Tensor& slots, const at::Tensor& lengths) {
  TORCH_CHECK(queries.device().is_cpu() && key.device().is_cpu() && value.device().is_cpu(), "a CPU kernel");
  TORCH_CHECK(queries.dim() == 3 && queries.scalar_type() == at::kFloat && queries.is_contiguous(),
              "queries: rows x heads x dim, float32, contiguous");
  TORCH_CHECK(key.dim() == 4 && key.is_contiguous() && value.is_contiguous() && key.sizes() == value.sizes() &&
                  key.scalar_type() == value.scalar_type(),
              "key and value: slots x kv heads x capacity x dim, contiguous, of one shape and dtype");
  const int64_t rows = queries.size(0), heads = queries.size(1), dim = queries.size(2);
  const int64_t kv_heads = key.size(1), capacity = key.size(2);
  TORCH_CHECK(key.size(3) == dim && kv_heads > 0 && heads % kv_heads == 0, "queries and keys disagree on heads or dim");
  TORCH_CHECK(slots.scalar_type() == at::kLong && lengths.scalar_type() == at::kLong && slots.is_contiguous() &&
                  lengths.is_contiguous() && slots.numel() == rows && lengths.numel() == rows,
              "slots and lengths: one int64 per row");
  const int64_t* slot = slots.data_ptr<int64_t>();
  const int64_t* length = lengths.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {  // out-of-range reads would be memory errors, not exceptions
    TORCH_CHECK(slot[r] >= 0 && slot[r] < key.size(0), "row ", r, " reads slot ", slot[r], " of ", key.size(0));
    TORCH_CHECK(length[r] >= 1 && length[r] <= capacity, "row ", r, " reads ", length[r], " positions of ", capacity);
  }
  auto out = at::empty({rows, heads, dim}, queries.options());
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    attend_rows<T>(queries.data_ptr<float>(), key.data_ptr<T>(), value.data_ptr<T>(), slot, length,
                   out.data_ptr<float>(), rows, heads, kv_heads, capacity, dim);
  };
  switch (key.scalar_type()) {
    case at::kFloat: run(float{}); break;
    case at::kBFloat16: run(c10::BFloat16{}); break;
    case at::kHalf: run(c10::Half{}); break;
    default: TORCH_CHECK(false, "keys and values of float32, bfloat16 or float16, not ", key.scalar_type());
  }
  return out;
}

}  // namespace

// torch.ops.distrain.ragged_decode_attention: an operator, so it dispatches, profiles and runs under
// inference mode as torch's own do
TORCH_LIBRARY(distrain, library) {
  library.def("ragged_decode_attention(Tensor queries, Tensor key, Tensor value, Tensor slots, Tensor lengths) -> Tensor");
}

TORCH_LIBRARY_IMPL(distrain, CPU, library) { library.impl("ragged_decode_attention", &attend); }
