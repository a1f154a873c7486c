// SPDX-License-Identifier: Apache-2.0
#include "config/model_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace ferry {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

// A config as a Triton user writes it for a TorchScript model.
constexpr char kTorchConfig[] = R"cfg(
name: "resnet"
platform: "pytorch_libtorch"
max_batch_size: 8
input [
  {
    name: "INPUT__0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, -1 ]
  },
  {
    name: "LENGTHS"
    data_type: TYPE_INT64
    dims: [ 1 ]
    optional: true
    allow_ragged_batch: true
  }
]
output [
  {
    name: "OUTPUT__0"
    data_type: TYPE_FP32
    dims: [ 1000 ]
  },
  {
    name: "LABEL"
    data_type: TYPE_STRING
    dims: [ 1 ]
  }
]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 500
  preserve_ordering: true
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy {
    max_queue_size: 64
  }
  priority_queue_policy {
    key: 1
    value: {
      timeout_action: DELAY
      default_timeout_microseconds: 100000
      allow_timeout_override: true
      max_queue_size: 16
    }
  }
}
instance_group [
  {
    name: "cpu_pool"
    count: 2
    kind: KIND_CPU
  }
]
version_policy: { specific: { versions: [ 1, 3 ] } }
model_warmup [
  {
    name: "full_batch"
    batch_size: 8
    count: 3
    inputs {
      key: "INPUT__0"
      value: {
        data_type: TYPE_FP32
        dims: [ 3, 224, 224 ]
        random_data: true
      }
    }
    inputs {
      key: "LENGTHS"
      value: {
        data_type: TYPE_INT64
        dims: [ 1 ]
        input_data_file: "lengths.bin"
      }
    }
  }
]
parameters: {
  key: "INFERENCE_MODE"
  value: { string_value: "true" }
}
parameters: {
  key: "ENABLE_NVFUSER"
  value: { string_value: "false" }
}
default_model_filename: "model.pt"
)cfg";

// A minimal valid config around `body`, for the checks of one rule at a time.
std::string Config(absl::string_view body) {
  return absl::StrCat(R"cfg(
                        platform: "identity"
                        input {
                          name: "x"
                          data_type: TYPE_FP32
                          dims: [ 4 ]
                        }
                        output {
                          name: "y"
                          data_type: TYPE_FP32
                          dims: [ 4 ]
                        }
                      )cfg",
                      body);
}

absl::StatusOr<ParsedModelConfig> Parse(absl::string_view text) {
  return ParseModelConfig(text, "m/config.pbtxt", "m");
}

std::string ErrorOf(absl::string_view text) {
  absl::StatusOr<ParsedModelConfig> parsed = Parse(text);
  EXPECT_FALSE(parsed.ok()) << "parsed: " << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(ModelConfigTest, TritonTorchConfigBecomesOptions) {
  absl::StatusOr<ParsedModelConfig> parsed =
      ParseModelConfig(kTorchConfig, "config.pbtxt", "resnet");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->warnings, IsEmpty());
  const ModelOptions& o = parsed->options;
  EXPECT_EQ(o.name, "resnet");
  EXPECT_EQ(o.platform, "pytorch_libtorch");
  EXPECT_EQ(o.backend, "");
  EXPECT_EQ(o.max_batch_size, 8);
  ASSERT_THAT(o.inputs, SizeIs(2));
  EXPECT_EQ(o.inputs[0].name, "INPUT__0");
  EXPECT_EQ(o.inputs[0].dtype, DataType::kFp32);
  EXPECT_THAT(o.inputs[0].dims, ElementsAre(3, 224, -1));
  EXPECT_FALSE(o.inputs[0].optional);
  EXPECT_TRUE(o.inputs[1].optional);
  EXPECT_TRUE(o.inputs[1].allow_ragged_batch);
  EXPECT_EQ(o.inputs[1].dtype, DataType::kInt64);
  ASSERT_THAT(o.outputs, SizeIs(2));
  EXPECT_THAT(o.outputs[0].dims, ElementsAre(1000));
  EXPECT_EQ(o.outputs[1].dtype, DataType::kBytes);

  const DynamicBatchingOptions& db = o.dynamic_batching;
  EXPECT_TRUE(db.enabled);
  EXPECT_THAT(db.preferred_batch_sizes, ElementsAre(4, 8));
  EXPECT_EQ(db.max_queue_delay_us, 500u);
  EXPECT_TRUE(db.preserve_ordering);
  EXPECT_EQ(db.priority_levels, 2u);
  EXPECT_EQ(db.default_priority_level, 2u);
  EXPECT_EQ(db.default_queue_policy.max_queue_size, 64u);
  ASSERT_EQ(db.priority_queue_policies.size(), 1u);
  const QueuePolicyOptions& p1 = db.priority_queue_policies.at(1);
  EXPECT_EQ(p1.timeout_action, TimeoutAction::kDelay);
  EXPECT_EQ(p1.default_timeout_us, 100000u);
  EXPECT_TRUE(p1.allow_timeout_override);
  EXPECT_EQ(p1.max_queue_size, 16u);

  ASSERT_THAT(o.instance_groups, SizeIs(1));
  EXPECT_EQ(o.instance_groups[0].name, "cpu_pool");
  EXPECT_EQ(o.instance_groups[0].count, 2);
  EXPECT_EQ(o.instance_groups[0].kind, DeviceKind::kCpu);
  EXPECT_EQ(o.instance_count(), 2);

  EXPECT_EQ(o.version_policy.kind, VersionPolicyOptions::Kind::kSpecific);
  EXPECT_THAT(o.version_policy.versions, ElementsAre(1, 3));

  ASSERT_THAT(o.warmups, SizeIs(1));
  const WarmupOptions& w = o.warmups[0];
  EXPECT_EQ(w.name, "full_batch");
  EXPECT_EQ(w.batch_size, 8u);
  EXPECT_EQ(w.count, 3u);
  ASSERT_EQ(w.inputs.size(), 2u);
  EXPECT_EQ(w.inputs.at("INPUT__0").fill, WarmupInput::Fill::kRandom);
  EXPECT_THAT(w.inputs.at("INPUT__0").dims, ElementsAre(3, 224, 224));
  EXPECT_EQ(w.inputs.at("LENGTHS").fill, WarmupInput::Fill::kFile);
  EXPECT_EQ(w.inputs.at("LENGTHS").file, "lengths.bin");
  EXPECT_EQ(w.inputs.at("LENGTHS").dtype, DataType::kInt64);

  EXPECT_EQ(o.parameter("INFERENCE_MODE"), "true");
  EXPECT_EQ(o.parameter("ENABLE_NVFUSER"), "false");
  EXPECT_EQ(o.default_model_filename, "model.pt");
  EXPECT_TRUE(ValidateModelOptions(o).ok()) << ValidateModelOptions(o);
}

TEST(ModelConfigTest, TritonTorchConfigRoundTripsThroughText) {
  absl::StatusOr<ParsedModelConfig> first =
      ParseModelConfig(kTorchConfig, "a", "resnet");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string text = ToConfigText(first->options);
  absl::StatusOr<ParsedModelConfig> second =
      ParseModelConfig(text, "b", "resnet");
  ASSERT_TRUE(second.ok()) << second.status() << "\n" << text;
  EXPECT_EQ(second->options, first->options) << text;
  EXPECT_THAT(second->warnings, IsEmpty());
}

TEST(ModelConfigTest, ToConfigTextParsesBackToEqualOptions) {
  ModelOptions o;
  o.name = "fraud";
  o.platform = "xgboost";
  o.backend = "fil";
  o.max_batch_size = 1024;
  o.inputs = {{.name = "input__0", .dtype = DataType::kFp32, .dims = {30}}};
  o.outputs = {{.name = "output__0", .dtype = DataType::kFp32, .dims = {1}}};
  o.dynamic_batching.enabled = true;
  o.dynamic_batching.max_queue_delay_us = 2000;
  o.instance_groups = {
      {.name = "g", .count = 3, .kind = DeviceKind::kGpu, .gpus = {0, 1}},
      {.name = "c", .count = 1, .kind = DeviceKind::kAuto, .gpus = {}}};
  o.version_policy.kind = VersionPolicyOptions::Kind::kAll;
  WarmupOptions w;
  w.name = "zeros";
  w.batch_size = 16;
  w.inputs["input__0"].dims = {30};
  o.warmups.push_back(w);
  o.parameters = {{"model_type", "xgboost_json"}, {"output_class", "false"}};

  const std::string text = ToConfigText(o);
  absl::StatusOr<ParsedModelConfig> parsed =
      ParseModelConfig(text, "t", "fraud");
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(parsed->options, o) << text;
  // A FIL config stays one Triton accepts: backend only, no Ferry platform
  // name.
  EXPECT_THAT(text,
              AllOf(HasSubstr("backend: \"fil\""), Not(HasSubstr("platform"))));
}

TEST(ModelConfigTest, ProtoKeepsTritonFieldNumbers) {
  struct Field {
    const google::protobuf::Descriptor* message;
    const char* name;
    int number;
  };
  const Field fields[] = {
      {inference::ModelConfig::descriptor(), "name", 1},
      {inference::ModelConfig::descriptor(), "platform", 2},
      {inference::ModelConfig::descriptor(), "version_policy", 3},
      {inference::ModelConfig::descriptor(), "max_batch_size", 4},
      {inference::ModelConfig::descriptor(), "input", 5},
      {inference::ModelConfig::descriptor(), "output", 6},
      {inference::ModelConfig::descriptor(), "instance_group", 7},
      {inference::ModelConfig::descriptor(), "default_model_filename", 8},
      {inference::ModelConfig::descriptor(), "cc_model_filenames", 9},
      {inference::ModelConfig::descriptor(), "metric_tags", 10},
      {inference::ModelConfig::descriptor(), "dynamic_batching", 11},
      {inference::ModelConfig::descriptor(), "parameters", 14},
      {inference::ModelConfig::descriptor(), "model_warmup", 16},
      {inference::ModelConfig::descriptor(), "backend", 17},
      {inference::ModelConfig::descriptor(), "runtime", 25},
      {inference::ModelInput::descriptor(), "optional", 8},
      {inference::ModelOutput::descriptor(), "label_filename", 4},
      {inference::ModelOutput::descriptor(), "reshape", 5},
      {inference::ModelInstanceGroup::descriptor(), "kind", 4},
      {inference::ModelInstanceGroup::descriptor(), "host_policy", 9},
      {inference::ModelDynamicBatching::descriptor(), "priority_queue_policy",
       7},
      {inference::ModelWarmup::Input::descriptor(), "input_data_file", 5},
  };
  for (const Field& f : fields) {
    const google::protobuf::FieldDescriptor* field =
        f.message->FindFieldByName(f.name);
    ASSERT_NE(field, nullptr) << f.message->full_name() << "." << f.name;
    EXPECT_EQ(field->number(), f.number)
        << f.message->full_name() << "." << f.name;
  }
  EXPECT_EQ(inference::ModelConfig::descriptor()->full_name(),
            "inference.ModelConfig");
  EXPECT_EQ(inference::TYPE_BF16, 14);
  EXPECT_EQ(inference::ModelInstanceGroup::KIND_MODEL, 3);
}

TEST(ModelConfigTest, FilBackendBecomesXgboost) {
  absl::StatusOr<ParsedModelConfig> parsed =
      ParseModelConfig(R"cfg(
                         backend: "fil"
                         max_batch_size: 32768 input
                         [ {
                           name: "input__0"
                           data_type: TYPE_FP32
                           dims: [ 30 ]
                         }] output
                         [ {
                           name: "output__0"
                           data_type: TYPE_FP32
                           dims: [ 1 ]
                         }] instance_group
                         [ { kind: KIND_CPU }] parameters
                         [ {
                           key: "model_type"
                           value: { string_value: "xgboost_ubj" }
                         }
                           , {
                             key: "output_class"
                             value: { string_value: "false" }
                           }]
                         dynamic_batching {}
                       )cfg",
                       "fraud/config.pbtxt", "fraud");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.name, "fraud");
  EXPECT_EQ(parsed->options.platform, "xgboost");
  EXPECT_EQ(parsed->options.backend, "fil");
  EXPECT_EQ(parsed->options.parameter("model_type"), "xgboost_ubj");
  EXPECT_EQ(parsed->options.parameter("output_class"), "false");
  EXPECT_TRUE(parsed->options.dynamic_batching.enabled);
  EXPECT_THAT(parsed->options.dynamic_batching.preferred_batch_sizes,
              IsEmpty());
  ASSERT_THAT(parsed->options.instance_groups, SizeIs(1));
  EXPECT_EQ(parsed->options.instance_groups[0].count, 0);  // Ferry picks
}

TEST(ModelConfigTest, FilModelTypeOtherThanXgboostIsError) {
  std::string error = ErrorOf(R"cfg(
    backend: "fil"
    parameters {
      key: "model_type"
      value: { string_value: "lightgbm" }
    }
  )cfg");
  EXPECT_THAT(error,
              AllOf(HasSubstr("parameters.model_type"), HasSubstr("lightgbm")));
  EXPECT_THAT(ErrorOf(R"cfg(backend: "fil")cfg"),
              HasSubstr("parameters.model_type"));
}

TEST(ModelConfigTest, PlatformNamesAreCanonicalized) {
  auto platform_of = [](absl::string_view text) -> std::string {
    absl::StatusOr<ParsedModelConfig> parsed = Parse(text);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? parsed->options.platform : "";
  };
  EXPECT_EQ(platform_of(R"cfg(backend: "pytorch")cfg"), "pytorch_libtorch");
  EXPECT_EQ(
      platform_of(R"cfg(platform: "pytorch_libtorch" backend: "pytorch")cfg"),
      "pytorch_libtorch");
  EXPECT_EQ(platform_of(R"cfg(backend: "xgboost")cfg"), "xgboost");
  EXPECT_EQ(platform_of(R"cfg(platform: "identity")cfg"), "identity");
  EXPECT_EQ(platform_of(R"cfg(platform: "onnxruntime_onnx")cfg"),
            "onnxruntime_onnx");
  EXPECT_EQ(platform_of(R"cfg(max_batch_size: 4)cfg"), "");
  EXPECT_THAT(
      ErrorOf(R"cfg(platform: "pytorch_libtorch" backend: "xgboost")cfg"),
      AllOf(HasSubstr("pytorch_libtorch"), HasSubstr("xgboost")));
}

TEST(ModelConfigTest, UnknownFieldIsWarningAndStillParses) {
  absl::StatusOr<ParsedModelConfig> parsed = Parse(
      "platform: \"identity\"\n"
      "input { name: \"x\" data_type: TYPE_FP32 dims: [ 4 ] }\n"
      "output { name: \"y\" data_type: TYPE_FP32 dims: [ 4 ] }\n"
      "optimization { execution_accelerators {\n"
      "  gpu_execution_accelerator: [ { name: \"tensorrt\" } ] } }\n"
      "sequence_batching { max_sequence_idle_microseconds: 5000000 }\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.platform, "identity");
  EXPECT_THAT(parsed->options.inputs, SizeIs(1));
  EXPECT_THAT(parsed->warnings,
              ElementsAre(AllOf(HasSubstr("m/config.pbtxt:4:"),
                                HasSubstr("optimization")),
                          AllOf(HasSubstr("m/config.pbtxt:6:"),
                                HasSubstr("sequence_batching"))));
}

TEST(ModelConfigTest, FieldsFerryIgnoresAreWarnings) {
  absl::StatusOr<ParsedModelConfig> parsed = Parse(R"cfg(
    platform: "pytorch_libtorch"
    input {
      name: "x"
      data_type: TYPE_FP32
      dims: [ 1 ]
      reshape: { shape: [] }
    }
    output {
      name: "y"
      data_type: TYPE_FP32
      dims: [ 3 ]
      label_filename: "labels.txt"
    }
  )cfg");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(
      parsed->warnings,
      ElementsAre(AllOf(HasSubstr("input[0] 'x'"), HasSubstr("reshape")),
                  AllOf(HasSubstr("output[0] 'y'"), HasSubstr("labels.txt"))));
}

TEST(ModelConfigTest, UnknownDataTypeNamesFieldAndValue) {
  EXPECT_THAT(
      ErrorOf("platform: \"identity\"\n"
              "input { name: \"x\" data_type: TYPE_FOO dims: [ 1 ] }\n"),
      AllOf(HasSubstr("m/config.pbtxt:2:"), HasSubstr("data_type"),
            HasSubstr("TYPE_FOO")));
}

TEST(ModelConfigTest, UnsupportedOrMissingDataTypeNamesTensor) {
  EXPECT_THAT(ErrorOf(R"cfg(output { name: "y" data_type: TYPE_BF16 })cfg"),
              AllOf(HasSubstr("output[0] 'y'"), HasSubstr("TYPE_BF16")));
  EXPECT_THAT(
      ErrorOf(R"cfg(input {
                     name: "x"
                     dims: [ 1 ]
                   })cfg"),
      AllOf(HasSubstr("input[0] 'x'"), HasSubstr("data_type is not set")));
}

TEST(ModelConfigTest, NegativeMaxBatchSizeIsError) {
  EXPECT_THAT(ErrorOf(Config("max_batch_size: -1")),
              HasSubstr("m/config.pbtxt: max_batch_size is -1; must be >= 0"));
}

TEST(ModelConfigTest, ZeroDimIsError) {
  EXPECT_THAT(
      ErrorOf(R"cfg(
        platform: "identity"
        input {
          name: "a"
          data_type: TYPE_FP32
          dims: [ 2 ]
        }
        input {
          name: "x"
          data_type: TYPE_FP32
          dims: [ 0, 3 ]
        }
      )cfg"),
      HasSubstr("m/config.pbtxt: input[1] 'x': dims[0] is 0; dims must be "
                "positive or -1"));
  EXPECT_THAT(ErrorOf(Config(R"cfg(output {
                                    name: "z"
                                    data_type: TYPE_FP32
                                    dims: [ -2 ]
                                  })cfg")),
              HasSubstr("output[1] 'z': dims[0] is -2"));
}

TEST(ModelConfigTest, DuplicateInputNamesAreError) {
  EXPECT_THAT(ErrorOf(Config(R"cfg(input {
                                    name: "x"
                                    data_type: TYPE_INT32
                                    dims: [ 1 ]
                                  })cfg")),
              AllOf(HasSubstr("input[1] 'x'"), HasSubstr("input[0]")));
}

TEST(ModelConfigTest, PreferredBatchSizeAboveMaxIsError) {
  EXPECT_THAT(
      ErrorOf(Config(R"cfg(
        max_batch_size: 8
        dynamic_batching { preferred_batch_size: [ 4, 16 ] }
      )cfg")),
      HasSubstr(
          "dynamic_batching.preferred_batch_size[1] is 16; must be in 1..8"));
}

TEST(ModelConfigTest, DynamicBatchingWithoutBatchingIsError) {
  EXPECT_THAT(ErrorOf(Config("dynamic_batching { }")),
              HasSubstr("dynamic_batching requires max_batch_size > 0"));
}

TEST(ModelConfigTest, PriorityLevelsOutOfRangeAreErrors) {
  EXPECT_THAT(
      ErrorOf(Config(R"cfg(
        max_batch_size: 4
        dynamic_batching { priority_levels: 2 default_priority_level: 3 }
      )cfg")),
      HasSubstr(
          "dynamic_batching.default_priority_level is 3; must be in 1..2"));
  EXPECT_THAT(ErrorOf(Config(R"cfg(
                max_batch_size: 4
                dynamic_batching {
                  priority_levels: 2
                  default_priority_level: 1
                  priority_queue_policy {
                    key: 5
                    value: { max_queue_size: 1 }
                  }
                }
              )cfg")),
              HasSubstr("priority_queue_policy key 5 is out of range"));
  EXPECT_THAT(
      ErrorOf(Config(R"cfg(
        max_batch_size: 4
        dynamic_batching { default_priority_level: 1 }
      )cfg")),
      HasSubstr("default_priority_level is 1 but priority_levels is 0"));
}

TEST(ModelConfigTest, SyntaxErrorReportsLineAndColumn) {
  std::string error =
      ErrorOf("platform: \"identity\"\nmax_batch_size: 4\ninput { name: }\n");
  EXPECT_THAT(error, HasSubstr("m/config.pbtxt:3:15: "));
}

TEST(ModelConfigTest, NameMustMatchModelDirectory) {
  EXPECT_THAT(ErrorOf(Config(R"cfg(name: "other")cfg")),
              AllOf(HasSubstr("'other'"), HasSubstr("'m'")));
  absl::StatusOr<ParsedModelConfig> parsed =
      Parse(Config(R"cfg(name: "m")cfg"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.name, "m");
}

TEST(ModelConfigTest, MissingSectionsGetTritonDefaults) {
  absl::StatusOr<ParsedModelConfig> parsed = Parse(Config(R"cfg(
    model_warmup {
      name: "w"
      batch_size: 1
      inputs {
        key: "x"
        value: {
          data_type: TYPE_FP32
          dims: [ 4 ]
        }
      }
    }
  )cfg"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ModelOptions& o = parsed->options;
  EXPECT_EQ(o.name, "m");
  EXPECT_EQ(o.max_batch_size, 0);
  EXPECT_FALSE(o.dynamic_batching.enabled);
  ASSERT_THAT(o.instance_groups, SizeIs(1));
  // No count: the repository picks one per core when it loads the model.
  EXPECT_EQ(o.instance_groups[0].count, 0);
  EXPECT_EQ(o.instance_groups[0].kind, DeviceKind::kAuto);
  EXPECT_EQ(o.version_policy.kind, VersionPolicyOptions::Kind::kLatest);
  EXPECT_EQ(o.version_policy.num_versions, 1u);
  ASSERT_THAT(o.warmups, SizeIs(1));
  EXPECT_EQ(o.warmups[0].count, 1u);
  EXPECT_EQ(o.warmups[0].inputs.at("x").fill, WarmupInput::Fill::kZero);
}

TEST(ModelConfigTest, InstanceGroupRules) {
  EXPECT_THAT(ErrorOf(Config("instance_group { kind: KIND_MODEL }")),
              AllOf(HasSubstr("instance_group[0]"), HasSubstr("KIND_MODEL")));
  EXPECT_THAT(ErrorOf(Config("instance_group { count: -2 }")),
              HasSubstr("instance_group[0].count is -2; must be >= 0"));
  EXPECT_THAT(ErrorOf(Config("instance_group { kind: KIND_CPU gpus: [ 0 ] }")),
              HasSubstr("KIND_CPU cannot list gpus"));
}

TEST(ModelConfigTest, VersionPolicyRules) {
  EXPECT_THAT(ErrorOf(Config("version_policy { specific { } }")),
              HasSubstr("version_policy.specific.versions is empty"));
  EXPECT_THAT(
      ErrorOf(Config("version_policy { specific { versions: [ 2, 0 ] } }")),
      HasSubstr("version_policy.specific.versions[1] is 0"));
  EXPECT_THAT(
      ErrorOf(Config("version_policy { latest { } }")),
      HasSubstr("version_policy.latest.num_versions is 0; must be >= 1"));
  EXPECT_THAT(
      ErrorOf(Config("version_policy { latest { num_versions: 1 } all { } }")),
      HasSubstr("m/config.pbtxt:"));
  absl::StatusOr<ParsedModelConfig> all =
      Parse(Config("version_policy { all { } }"));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->options.version_policy.kind, VersionPolicyOptions::Kind::kAll);
}

TEST(ModelConfigTest, WarmupRules) {
  EXPECT_THAT(
      ErrorOf(Config(R"cfg(
        max_batch_size: 4
        model_warmup { name: "big" batch_size: 5 }
      )cfg")),
      HasSubstr("model_warmup[0] 'big': batch_size is 5; must be in 1..4"));
  EXPECT_THAT(ErrorOf(Config(R"cfg(model_warmup { name: "none" })cfg")),
              HasSubstr("batch_size is 0; must be in 1..1"));
  EXPECT_THAT(ErrorOf(Config(R"cfg(
                model_warmup {
                  name: "w"
                  batch_size: 1
                  inputs {
                    key: "nope"
                    value: {
                      data_type: TYPE_FP32
                      dims: [ 4 ]
                      zero_data: true
                    }
                  }
                }
              )cfg")),
              HasSubstr("'nope' is not an input of the model"));
  EXPECT_THAT(ErrorOf(Config(R"cfg(
                model_warmup {
                  name: "w"
                  batch_size: 1
                  inputs {
                    key: "x"
                    value: {
                      data_type: TYPE_FP32
                      dims: [ 4 ]
                      input_data_file: "../../secret"
                    }
                  }
                }
              )cfg")),
              HasSubstr("input_data_file '../../secret'"));
}

TEST(ModelConfigTest, EmptyPlatformParsesButDoesNotValidate) {
  absl::StatusOr<ParsedModelConfig> parsed = Parse("max_batch_size: 4");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.platform, "");
  absl::Status status = ValidateModelOptions(parsed->options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("model 'm': platform or backend must be set"),
                    HasSubstr("no input"), HasSubstr("no output")));
}

TEST(ModelConfigTest, ParseAllowsMissingTensorsForAutoComplete) {
  absl::StatusOr<ParsedModelConfig> parsed =
      Parse(R"cfg(platform: "pytorch_libtorch")cfg");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(ValidateModelOptions(parsed->options).message(),
              HasSubstr("no input"));
}

TEST(ModelConfigTest, ValidateReportsEveryProblem) {
  absl::StatusOr<ParsedModelConfig> parsed = Parse(Config(""));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ModelOptions o = parsed->options;
  o.max_batch_size = -3;
  o.inputs[0].dims = {0};
  absl::Status status = ValidateModelOptions(o);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("max_batch_size is -3"),
                                      HasSubstr("input[0] 'x': dims[0] is 0")));
}

class LoadModelConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("ferry_model_config_test_", getpid());
    std::filesystem::create_directories(dir_ / "fraud");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(LoadModelConfigFileTest, ReadsFileAndNamesItInMessages) {
  const std::filesystem::path path = dir_ / "fraud" / "config.pbtxt";
  {
    std::ofstream out(path);
    out << Config("max_batch_size: 2\n");
  }
  absl::StatusOr<ParsedModelConfig> parsed = LoadModelConfigFile(path, "fraud");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.name, "fraud");
  EXPECT_EQ(parsed->options.max_batch_size, 2);

  {
    std::ofstream out(path);
    out << Config("max_batch_size: -1\n");
  }
  absl::StatusOr<ParsedModelConfig> bad = LoadModelConfigFile(path, "fraud");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr(path.string() + ": max_batch_size is -1"));
}

TEST_F(LoadModelConfigFileTest, MissingFileIsNotFound) {
  absl::StatusOr<ParsedModelConfig> parsed =
      LoadModelConfigFile(dir_ / "fraud" / "nope.pbtxt", "fraud");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadModelConfigFile(dir_ / "fraud", "fraud").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry
