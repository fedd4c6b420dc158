//! Native server (being written).
