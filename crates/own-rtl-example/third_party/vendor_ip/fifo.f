// The FIFO's file list, as a vendor ships one (paths relative to the crate).
third_party/vendor_ip/StreamFifo.v
