//! CAKE's flow and host isolation (Linux `cake_hash`): a set-associative table of 1024 flow
//! queues in sets of 8 ways, host tables alike, and the per-host DRR quantum that lets hosts
//! rather than flows share the link (dual-srchost / dual-dsthost / triple-isolate).
use super::super::drr::mix;
use super::{Cake, FlowSet, CAKE_QUEUES, CAKE_SET_WAYS, FLOW_DST_IP, FLOW_DUAL_DST, FLOW_DUAL_SRC, FLOW_FLOWS, FLOW_SRC_IP};

impl Cake {
    fn h(&self, x: u32, which: usize) -> u32 { (mix(x as u64 ^ self.salt[which]) >> 32) as u32 }

    /// (flow hash, source-host hash, destination-host hash) of a packet, by isolation mode.
    pub fn hashes(&self, flow: u32, src: u32, dst: u32) -> (u32, u32, u32) {
        let mode = self.params.flow_mode;
        let srch = self.h(src, 1);
        let dsth = self.h(dst, 2);
        let mut fh = 0;
        if mode & FLOW_FLOWS != 0 {
            fh = self.h(flow, 0);
        } else {
            if mode & FLOW_SRC_IP != 0 {
                fh ^= srch;
            }
            if mode & FLOW_DST_IP != 0 {
                fh ^= dsth;
            }
        }
        (fh, srch, dsth)
    }

    /// The queue a packet of this flow would take now, without side effects on the tables
    /// (a copy of [`Cake::classify`]'s lookup; for tests and diagnostics).
    pub fn classify_peek(&self, flow: u32, src: u32, dst: u32) -> usize {
        if self.params.flow_mode == 0 {
            return 0;
        }
        let fh = self.hashes(flow, src, dst).0;
        let reduced = fh as usize % CAKE_QUEUES;
        let outer = reduced - reduced % CAKE_SET_WAYS;
        let mut k = reduced % CAKE_SET_WAYS;
        for _ in 0..CAKE_SET_WAYS {
            if self.tags[outer + k] == fh && self.flows[outer + k].set != FlowSet::None {
                return outer + k;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        reduced
    }

    fn dsrc(&self) -> bool { self.params.flow_mode & FLOW_DUAL_SRC == FLOW_DUAL_SRC }
    fn ddst(&self) -> bool { self.params.flow_mode & FLOW_DUAL_DST == FLOW_DUAL_DST }

    pub(super) fn inc_bulk_hosts(&mut self, idx: usize) {
        let (s, d) = (self.flows[idx].srchost as usize, self.flows[idx].dsthost as usize);
        if self.dsrc() && (self.hosts[s].srchost_bulk as usize) < CAKE_QUEUES {
            self.hosts[s].srchost_bulk += 1;
        }
        if self.ddst() && (self.hosts[d].dsthost_bulk as usize) < CAKE_QUEUES {
            self.hosts[d].dsthost_bulk += 1;
        }
    }
    pub(super) fn dec_bulk_hosts(&mut self, idx: usize) {
        let (s, d) = (self.flows[idx].srchost as usize, self.flows[idx].dsthost as usize);
        if self.dsrc() && self.hosts[s].srchost_bulk > 0 {
            self.hosts[s].srchost_bulk -= 1;
        }
        if self.ddst() && self.hosts[d].dsthost_bulk > 0 {
            self.hosts[d].dsthost_bulk -= 1;
        }
    }

    /// The DRR quantum of queue `idx`, divided by its busiest host's bulk flow count, dithered by
    /// a random 16-bit fraction (Linux `cake_get_flow_quantum`).
    pub(super) fn get_flow_quantum(&mut self, idx: usize) -> i32 {
        let f = &self.flows[idx];
        let mut load = 1u16;
        if self.dsrc() {
            load = load.max(self.hosts[f.srchost as usize].srchost_bulk);
        }
        if self.ddst() {
            load = load.max(self.hosts[f.dsthost as usize].dsthost_bulk);
        }
        let dither = (self.rng.next_u64() >> 48) as u32;
        ((self.flow_quantum * self.quantum_div[load as usize] + dither) >> 16) as i32
    }

    /// Host slot of `hash` in the host table (set-associative like the flows): a slot already
    /// tagged with it, else the first in its set with no bulk flows, else its own slot.
    fn host_slot(&mut self, hash: u32, src: bool) -> usize {
        let idx = hash as usize % CAKE_QUEUES;
        let inner = idx % CAKE_SET_WAYS;
        let outer = idx - inner;
        let mut k = inner;
        for _ in 0..CAKE_SET_WAYS {
            let h = &self.hosts[outer + k];
            if (if src { h.srchost_tag } else { h.dsthost_tag }) == hash {
                return outer + k;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        for _ in 0..CAKE_SET_WAYS {
            let h = &self.hosts[outer + k];
            if (if src { h.srchost_bulk } else { h.dsthost_bulk }) == 0 {
                break;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        let h = &mut self.hosts[outer + k];
        if src {
            h.srchost_tag = hash;
        } else {
            h.dsthost_tag = hash;
        }
        outer + k
    }

    /// Queue of a packet (Linux `cake_hash`): direct hit, else a way of its set reserved for the
    /// flow or idle, else a collision on the hashed queue. Assigns host slots to a newly taken
    /// queue.
    pub fn classify(&mut self, flow: u32, src: u32, dst: u32) -> usize {
        if self.params.flow_mode == 0 {
            return 0;
        }
        let (fh, srch, dsth) = self.hashes(flow, src, dst);
        let reduced = fh as usize % CAKE_QUEUES;
        if self.tags[reduced] == fh && self.flows[reduced].set != FlowSet::None {
            self.ways.directs += 1;
            return reduced;
        }
        let inner = reduced % CAKE_SET_WAYS;
        let outer = reduced - inner;
        let (mut alloc_src, mut alloc_dst) = (false, false);
        let mut k = inner;
        let mut found = false;
        for i in 0..CAKE_SET_WAYS {
            if self.tags[outer + k] == fh {
                if i > 0 {
                    self.ways.hits += 1;
                }
                if self.flows[outer + k].set == FlowSet::None {
                    alloc_src = self.dsrc();
                    alloc_dst = self.ddst();
                }
                found = true;
                break;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        if !found {
            for _ in 0..CAKE_SET_WAYS {
                if self.flows[outer + k].set == FlowSet::None {
                    self.ways.misses += 1;
                    alloc_src = self.dsrc();
                    alloc_dst = self.ddst();
                    found = true;
                    break;
                }
                k = (k + 1) % CAKE_SET_WAYS;
            }
        }
        if !found {
            // All ways busy: share the hashed queue and move its host accounting to this flow.
            self.ways.collisions += 1;
            alloc_src = self.dsrc();
            alloc_dst = self.ddst();
            if self.flows[outer + k].set == FlowSet::Bulk {
                self.dec_bulk_hosts(outer + k);
            }
        }
        let idx = outer + k;
        self.tags[idx] = fh;
        if alloc_src {
            let s = self.host_slot(srch, true);
            self.flows[idx].srchost = s as u16;
            if self.flows[idx].set == FlowSet::Bulk && self.dsrc() && (self.hosts[s].srchost_bulk as usize) < CAKE_QUEUES {
                self.hosts[s].srchost_bulk += 1;
            }
        }
        if alloc_dst {
            let d = self.host_slot(dsth, false);
            self.flows[idx].dsthost = d as u16;
            if self.flows[idx].set == FlowSet::Bulk && self.ddst() && (self.hosts[d].dsthost_bulk as usize) < CAKE_QUEUES {
                self.hosts[d].dsthost_bulk += 1;
            }
        }
        idx
    }
}
