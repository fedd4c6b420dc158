//! Codec for API keys 88 and 89. (Being written.)
