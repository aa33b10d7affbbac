//! The forward pass of a BERT encoder (the architecture of all-MiniLM-L6-v2 and the other
//! sentence-transformers BERT models) on candle's CPU tensors, with mean pooling: the weights'
//! names are those of Hugging Face's `BertModel`.

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};

/// The few settings of a BERT model's `config.json` the forward pass needs.
#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "type_vocab_size")]
    pub type_vocab_size: usize,
    #[serde(default = "layer_norm_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "hidden_act")]
    pub hidden_act: String,
}

fn type_vocab_size() -> usize {
    2
}

fn layer_norm_eps() -> f64 {
    1e-12
}

fn hidden_act() -> String {
    "gelu".into()
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded BERT encoder.
pub(crate) struct Bert {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    max_positions: usize,
}

impl std::fmt::Debug for Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bert").field("layers", &self.layers.len()).field("heads", &self.heads).finish()
    }
}

fn layer_norm(size: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<LayerNorm> {
    let weight = vb.get(size, "weight")?;
    let bias = vb.get(size, "bias")?;
    Ok(LayerNorm::new(weight, bias, eps))
}

impl Bert {
    /// Reads the weights under `vb` (Hugging Face's names, with or without a `bert.` prefix).
    pub(crate) fn load(vb: VarBuilder, config: &BertConfig) -> candle_core::Result<Self> {
        if config.hidden_act != "gelu" {
            candle_core::bail!("activation '{}' is not supported (only `gelu`)", config.hidden_act);
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            candle_core::bail!(
                "hidden size {} is not a multiple of the {} attention heads",
                config.hidden_size,
                config.num_attention_heads
            );
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") { vb.pp("bert") } else { vb };
        let (h, eps) = (config.hidden_size, config.layer_norm_eps);
        let e = vb.pp("embeddings");
        let word = candle_nn::embedding(config.vocab_size, h, e.pp("word_embeddings"))?;
        let position = candle_nn::embedding(config.max_position_embeddings, h, e.pp("position_embeddings"))?;
        let token_type = candle_nn::embedding(config.type_vocab_size, h, e.pp("token_type_embeddings"))?;
        let embedding_norm = layer_norm(h, eps, e.pp("LayerNorm"))?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            layers.push(Layer {
                query: candle_nn::linear(h, h, a.pp("self.query"))?,
                key: candle_nn::linear(h, h, a.pp("self.key"))?,
                value: candle_nn::linear(h, h, a.pp("self.value"))?,
                attention_out: candle_nn::linear(h, h, a.pp("output.dense"))?,
                attention_norm: layer_norm(h, eps, a.pp("output.LayerNorm"))?,
                intermediate: candle_nn::linear(h, config.intermediate_size, l.pp("intermediate.dense"))?,
                output: candle_nn::linear(config.intermediate_size, h, l.pp("output.dense"))?,
                output_norm: layer_norm(h, eps, l.pp("output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            word,
            position,
            token_type,
            embedding_norm,
            layers,
            heads: config.num_attention_heads,
            head_dim: h / config.num_attention_heads,
            max_positions: config.max_position_embeddings,
        })
    }

    /// The most word pieces one text may have.
    pub(crate) fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// Mean-pooled, L2-normalised embeddings of a batch of token-id sequences (each already
    /// truncated to [`max_positions`](Self::max_positions)), one row per sequence.
    pub(crate) fn embed(&self, batch: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let device = Device::Cpu;
        let len = batch.iter().map(|s| s.len()).max().unwrap_or(0);
        if batch.is_empty() || len == 0 {
            return Ok(vec![Vec::new(); batch.len()]);
        }
        let b = batch.len();
        let mut ids = vec![0u32; b * len];
        let mut mask = vec![0f32; b * len];
        for (row, seq) in batch.iter().enumerate() {
            ids[row * len..row * len + seq.len()].copy_from_slice(seq);
            mask[row * len..row * len + seq.len()].fill(1.0);
        }
        let ids = Tensor::from_vec(ids, (b, len), &device)?;
        let mask = Tensor::from_vec(mask, (b, len), &device)?;
        let positions = Tensor::arange(0u32, len as u32, &device)?.unsqueeze(0)?.broadcast_as((b, len))?;
        let types = ids.zeros_like()?;
        let x = self.word.forward(&ids)?;
        let x = (x + self.position.forward(&positions)?)?;
        let x = (x + self.token_type.forward(&types)?)?;
        let mut x = self.embedding_norm.forward(&x)?;
        // Padding gets a large negative score before the softmax: (b, 1, 1, len).
        let bias = ((mask.ones_like()? - &mask)? * -1e4f64)?.unsqueeze(1)?.unsqueeze(1)?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        for layer in &self.layers {
            let heads = |t: Tensor| -> candle_core::Result<Tensor> {
                t.reshape((b, len, self.heads, self.head_dim))?.transpose(1, 2)?.contiguous()
            };
            let q = heads(layer.query.forward(&x)?)?;
            let k = heads(layer.key.forward(&x)?)?;
            let v = heads(layer.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probs.matmul(&v)?.transpose(1, 2)?.reshape((b, len, self.heads * self.head_dim))?;
            let attended = layer.attention_norm.forward(&(layer.attention_out.forward(&context)? + &x)?)?;
            let inner = layer.intermediate.forward(&attended)?.gelu_erf()?;
            x = layer.output_norm.forward(&(layer.output.forward(&inner)? + &attended)?)?;
        }
        // Mean over the real tokens, then unit length.
        let weights = mask.unsqueeze(2)?;
        let summed = x.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)?.to_dtype(DType::F32)?.to_vec2()
    }
}
