//! The blocking API ([`Card`]) on the driver's nodes: each call as the backend's own, with no
//! caller that can give it up.

use std::time::Duration;

use crate::card::HwCard;
use crate::node::Abandon;
use xdma_core::{Card, CardAddr, CardInfo, Result, Transfer};

impl Card for HwCard {
    fn info(&self) -> &CardInfo {
        &self.inner.info
    }

    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        self.write_mm_for(channel, addr, data, &Abandon::default())
    }

    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        self.read_mm_for(channel, addr, buf, &Abandon::default())
    }

    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        self.send(channel, frame)
    }

    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        self.recv_for(channel, buf, timeout, &Abandon::default())
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        self.inner.read_reg(offset)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        self.inner.write_reg(offset, value)
    }

    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32> {
        self.wait_for(event, timeout, &Abandon::default())
    }

    fn now_ps(&self) -> Result<u64> {
        Ok(self.inner.now_ps())
    }
}
