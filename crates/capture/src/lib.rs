//! Capture analysis: pcap/pcapng in, jitterlab's shared tables out. Streaming; no Python.
