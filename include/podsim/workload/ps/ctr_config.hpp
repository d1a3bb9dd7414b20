// Typed description of a click-through-rate (CTR) model with a giant sparse embedding table trained by a
// parameter server (kind: ctr_sparse_ps): the YAML keys model.*, training.*, ps.* of the CLI contract.
#pragma once

#include <string>
#include <vector>

#include "podsim/topology/device_spec.hpp"

namespace podsim {
class ConfigNode;
}

namespace podsim::workload {

// One sparse embedding table; a row ("entry") holds a feature's key, its weights and their optimizer state.
struct EmbeddingTable {
  double features = 0;                   // rows (distinct sparse features)
  int dimension = 0;                     // weights per row
  double bytes_per_value = 4;            // per weight
  double optimizer_bytes_per_value = 4;  // optimizer state per weight (Adagrad fp32: 4, Adam fp32: 8)
  double key_bytes = 8;                  // the feature id stored with the row
  double value_bytes() const { return dimension * bytes_per_value; }  // the weights: what a pull moves
  double entry_bytes() const { return key_bytes + dimension * (bytes_per_value + optimizer_bytes_per_value); }
  double table_bytes() const { return features * entry_bytes(); }
};

struct CtrModel {
  EmbeddingTable embedding;
  int slots = 0;                    // feature fields; their pooled embeddings are the MLP input
  double nonzeros_per_example = 0;  // sparse features present in one example
  double zipf_exponent = 0;         // key popularity ~ rank^-exponent
  std::vector<int> mlp_hidden;      // hidden widths of the dense MLP; it ends in one output
  int mlp_input() const { return slots * embedding.dimension; }
  std::vector<int> mlp_widths() const;  // input, hidden..., 1
  double dense_params() const;          // MLP weights and biases
};

struct CtrTraining {
  int batch_per_gpu = 0;          // examples per GPU per mini-batch
  int batch_per_cpu_node = 0;     // examples per CPU server per mini-batch (cpu_cluster)
  int minibatches_per_batch = 0;  // mini-batches that share one loaded working set; 0 = auto
  topology::Precision precision = topology::Precision::fp32;
  double dense_optimizer_bytes_per_param = 8;  // MLP optimizer state (Adam fp32: 8)
};

struct PsOptions {
  double dram_cache_bytes = 0;   // per GPU server: hot-key cache in host DRAM
  std::string dram_cache_where;  // "file:line:col: ps.dram_cache_GiB", for errors that need the topology
  bool pipeline = true;          // prefetch the next batch (SSD, network) while the current one trains
};

struct CtrWorkload {
  std::string name, file;
  CtrModel model;
  CtrTraining training;
  PsOptions ps;
};

// Reads and checks every key (dimension >= 1, zipf_exponent >= 0, ...); errors name file, line and field.
CtrWorkload read_ctr_workload(const ConfigNode& root, const std::string& file);

}  // namespace podsim::workload
