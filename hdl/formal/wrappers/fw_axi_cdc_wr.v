/*
 * Proof wrapper of axi_cdc_wr, with two free clocks as in fw_async_fifo (s_clk toggles at every
 * step of the solver, m_clk at any steps the solver picks, so every ratio and phase is tried;
 * each side's inputs change only at its own clock's rising edge). The slave port is checked as
 * an AXI4 slave under s_rst, the master port as a master under m_rst; neither has read
 * channels, which are tied idle.
 *
 * Assumed of the two neighbours: the master on the slave port gives each burst one or two beats
 * and puts WLAST where its burst ends; the memory controller on the master port answers only
 * bursts whose address and last beat it has taken. Resets come whenever the
 * solver likes, on either side.
 *
 * What the bridge promises (its header comment), as long as neither side was reset again after
 * the first reset: every burst taken on the slave port appears on the master port once, in
 * order, with the same ID, address, length and attributes; every W beat likewise, with its data,
 * strobes and WLAST; every response taken on the master port returns on the slave port, in
 * order, with its ID and code. And until the master side itself is reset again, whatever the
 * slave side does: a W beat goes out only after its burst's address, and WLAST marks the last
 * beat of every burst issued, so a reset of the slave side alone never leaves the memory
 * controller waiting for data (a cover shows such a burst finished with a beat that writes
 * nothing).
 * Order is checked by data independence: one burst, beat and response of the solver's choice
 * is recorded as it is taken and compared where it comes out.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axi_cdc_wr #
(
    // Width of the data bus in bits (one byte, so that the solver's state stays small)
    parameter DATA_WIDTH = 8,
    // Width of the byte address in bits (the least the property modules take)
    parameter ADDR_WIDTH = 12,
    // Width of the write strobe
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of the ID
    parameter ID_WIDTH = 1,
    // log2 of the FIFO depths (the smallest async_fifo allows)
    parameter AW_FIFO_ADDR_WIDTH = 2,
    parameter W_FIFO_ADDR_WIDTH = 2,
    parameter B_FIFO_ADDR_WIDTH = 2
)
(
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [ID_WIDTH-1:0]    s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_awaddr,
    input  wire [7:0]             s_axi_awlen,
    input  wire [2:0]             s_axi_awsize,
    input  wire [1:0]             s_axi_awburst,
    input  wire                   s_axi_awlock,
    input  wire [3:0]             s_axi_awcache,
    input  wire [2:0]             s_axi_awprot,
    input  wire                   s_axi_awvalid,
    input  wire [DATA_WIDTH-1:0]  s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axi_wstrb,
    input  wire                   s_axi_wlast,
    input  wire                   s_axi_wvalid,
    input  wire                   s_axi_bready,
    input  wire                   m_clk,
    input  wire                   m_rst,
    input  wire                   m_axi_awready,
    input  wire                   m_axi_wready,
    input  wire [ID_WIDTH-1:0]    m_axi_bid,
    input  wire [1:0]             m_axi_bresp,
    input  wire                   m_axi_bvalid
);

`ifdef FORMAL

    wire                   s_axi_awready;
    wire                   s_axi_wready;
    wire [ID_WIDTH-1:0]    s_axi_bid;
    wire [1:0]             s_axi_bresp;
    wire                   s_axi_bvalid;
    wire [ID_WIDTH-1:0]    m_axi_awid;
    wire [ADDR_WIDTH-1:0]  m_axi_awaddr;
    wire [7:0]             m_axi_awlen;
    wire [2:0]             m_axi_awsize;
    wire [1:0]             m_axi_awburst;
    wire                   m_axi_awlock;
    wire [3:0]             m_axi_awcache;
    wire [2:0]             m_axi_awprot;
    wire                   m_axi_awvalid;
    wire [DATA_WIDTH-1:0]  m_axi_wdata;
    wire [STRB_WIDTH-1:0]  m_axi_wstrb;
    wire                   m_axi_wlast;
    wire                   m_axi_wvalid;
    wire                   m_axi_bready;

    axi_cdc_wr #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .STRB_WIDTH(STRB_WIDTH),
        .ID_WIDTH(ID_WIDTH),
        .AW_FIFO_ADDR_WIDTH(AW_FIFO_ADDR_WIDTH),
        .W_FIFO_ADDR_WIDTH(W_FIFO_ADDR_WIDTH),
        .B_FIFO_ADDR_WIDTH(B_FIFO_ADDR_WIDTH)
    ) dut (
        .s_clk(s_clk),
        .s_rst(s_rst),
        .s_axi_awid(s_axi_awid),
        .s_axi_awaddr(s_axi_awaddr),
        .s_axi_awlen(s_axi_awlen),
        .s_axi_awsize(s_axi_awsize),
        .s_axi_awburst(s_axi_awburst),
        .s_axi_awlock(s_axi_awlock),
        .s_axi_awcache(s_axi_awcache),
        .s_axi_awprot(s_axi_awprot),
        .s_axi_awvalid(s_axi_awvalid),
        .s_axi_awready(s_axi_awready),
        .s_axi_wdata(s_axi_wdata),
        .s_axi_wstrb(s_axi_wstrb),
        .s_axi_wlast(s_axi_wlast),
        .s_axi_wvalid(s_axi_wvalid),
        .s_axi_wready(s_axi_wready),
        .s_axi_bid(s_axi_bid),
        .s_axi_bresp(s_axi_bresp),
        .s_axi_bvalid(s_axi_bvalid),
        .s_axi_bready(s_axi_bready),
        .m_clk(m_clk),
        .m_rst(m_rst),
        .m_axi_awid(m_axi_awid),
        .m_axi_awaddr(m_axi_awaddr),
        .m_axi_awlen(m_axi_awlen),
        .m_axi_awsize(m_axi_awsize),
        .m_axi_awburst(m_axi_awburst),
        .m_axi_awlock(m_axi_awlock),
        .m_axi_awcache(m_axi_awcache),
        .m_axi_awprot(m_axi_awprot),
        .m_axi_awvalid(m_axi_awvalid),
        .m_axi_awready(m_axi_awready),
        .m_axi_wdata(m_axi_wdata),
        .m_axi_wstrb(m_axi_wstrb),
        .m_axi_wlast(m_axi_wlast),
        .m_axi_wvalid(m_axi_wvalid),
        .m_axi_wready(m_axi_wready),
        .m_axi_bid(m_axi_bid),
        .m_axi_bresp(m_axi_bresp),
        .m_axi_bvalid(m_axi_bvalid),
        .m_axi_bready(m_axi_bready)
    );

    faxi_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_in (
        .clk(s_clk),
        .rst(s_rst),
        .awid(s_axi_awid),
        .awaddr(s_axi_awaddr),
        .awlen(s_axi_awlen),
        .awsize(s_axi_awsize),
        .awburst(s_axi_awburst),
        .awvalid(s_axi_awvalid),
        .awready(s_axi_awready),
        .wdata(s_axi_wdata),
        .wstrb(s_axi_wstrb),
        .wlast(s_axi_wlast),
        .wvalid(s_axi_wvalid),
        .wready(s_axi_wready),
        .bid(s_axi_bid),
        .bresp(s_axi_bresp),
        .bvalid(s_axi_bvalid),
        .bready(s_axi_bready),
        .arid({ID_WIDTH{1'b0}}),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({ID_WIDTH{1'b0}}),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    faxi_master #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_out (
        .clk(m_clk),
        .rst(m_rst),
        .awid(m_axi_awid),
        .awaddr(m_axi_awaddr),
        .awlen(m_axi_awlen),
        .awsize(m_axi_awsize),
        .awburst(m_axi_awburst),
        .awvalid(m_axi_awvalid),
        .awready(m_axi_awready),
        .wdata(m_axi_wdata),
        .wstrb(m_axi_wstrb),
        .wlast(m_axi_wlast),
        .wvalid(m_axi_wvalid),
        .wready(m_axi_wready),
        .bid(m_axi_bid),
        .bresp(m_axi_bresp),
        .bvalid(m_axi_bvalid),
        .bready(m_axi_bready),
        .arid({ID_WIDTH{1'b0}}),
        .araddr({ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({ID_WIDTH{1'b0}}),
        .rdata({DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    // The solver's own step: the clocks and each side's inputs are constrained against it.
    // A simulation has no such step (a replay drives the clocks and inputs from a trace
    // that already keeps these assumptions), and Verilator has no `$global_clock`.
`ifndef VERILATOR
    reg f_gpast = 1'b0;

    always @($global_clock) begin
        f_gpast <= 1'b1;
        if (f_gpast) begin
            assume (s_clk == !$past(s_clk));
            if (!$rose(s_clk)) begin
                assume ($stable(s_rst) && $stable(s_axi_awvalid) && $stable(s_axi_awid)
                    && $stable(s_axi_awaddr) && $stable(s_axi_awlen) && $stable(s_axi_awsize)
                    && $stable(s_axi_awburst) && $stable(s_axi_awlock) && $stable(s_axi_awcache)
                    && $stable(s_axi_awprot) && $stable(s_axi_wvalid) && $stable(s_axi_wdata)
                    && $stable(s_axi_wstrb) && $stable(s_axi_wlast) && $stable(s_axi_bready));
            end
            if (!$rose(m_clk)) begin
                assume ($stable(m_rst) && $stable(m_axi_awready) && $stable(m_axi_wready)
                    && $stable(m_axi_bvalid) && $stable(m_axi_bid) && $stable(m_axi_bresp));
            end
        end
    end
`endif

    wire f_s_aw = s_axi_awvalid && s_axi_awready;
    wire f_s_w = s_axi_wvalid && s_axi_wready;
    wire f_s_b = s_axi_bvalid && s_axi_bready;
    wire f_m_aw = m_axi_awvalid && m_axi_awready;
    wire f_m_w = m_axi_wvalid && m_axi_wready;
    wire f_m_b = m_axi_bvalid && m_axi_bready;

    // Whether a side was reset again after the first reset (then what was in flight is
    // discarded, by design).
    reg f_s_ran = 1'b0;
    reg f_m_ran = 1'b0;
    reg f_s_reset_again = 1'b0;
    reg f_m_reset_again = 1'b0;

    always @(posedge s_clk) begin
        if (s_rst && f_s_ran) f_s_reset_again <= 1'b1;
        if (!s_rst) f_s_ran <= 1'b1;
    end

    always @(posedge m_clk) begin
        if (m_rst && f_m_ran) f_m_reset_again <= 1'b1;
        if (!m_rst) f_m_ran <= 1'b1;
    end

    wire f_clean = !f_s_reset_again && !f_m_reset_again && !s_rst && !m_rst;

    /*
     * The master on the slave port: bursts of one or two beats (even and odd bursts each of a
     * length the solver picks, so that lengths mix), WLAST on each burst's last beat. Its
     * counts restart with its reset.
     */
    (* anyconst *) reg f_len_even;
    (* anyconst *) reg f_len_odd;
    reg [3:0] f_s_aw_n = 4'd0;      // bursts taken on the slave port
    reg [3:0] f_s_wlast_n = 4'd0;   // bursts whose last beat was taken
    reg [7:0] f_s_beat = 8'd0;      // beats of the current burst taken
    reg [3:0] f_s_b_n = 4'd0;       // responses handed back
    reg [5:0] f_s_w_n = 6'd0;       // beats taken

    always @(posedge s_clk) begin
        if (s_rst) begin
            f_s_aw_n <= 4'd0;
            f_s_wlast_n <= 4'd0;
            f_s_beat <= 8'd0;
            f_s_b_n <= 4'd0;
            f_s_w_n <= 6'd0;
        end else begin
            if (f_s_aw) f_s_aw_n <= f_s_aw_n + 4'd1;
            if (f_s_w) begin
                f_s_w_n <= f_s_w_n + 6'd1;
                if (s_axi_wlast) begin
                    f_s_wlast_n <= f_s_wlast_n + 4'd1;
                    f_s_beat <= 8'd0;
                end else begin
                    f_s_beat <= f_s_beat + 8'd1;
                end
            end
            if (f_s_b) f_s_b_n <= f_s_b_n + 4'd1;
        end
    end

    always @(*) begin
        if (s_axi_awvalid) begin
            assume (s_axi_awlen == {7'd0, f_s_aw_n[0] ? f_len_odd : f_len_even});
        end
        if (s_axi_wvalid) begin
            assume (s_axi_wlast == (f_s_beat == {7'd0, f_s_wlast_n[0] ? f_len_odd : f_len_even}));
        end
    end

    /*
     * The memory controller on the master port answers only bursts whose address and last beat
     * it has taken (the rule table's `no_b_without_request` has no formal form; counts say it
     * for responses in order). Its counts restart with its reset, which forgets everything.
     */
    reg [3:0] f_m_aw_n = 4'd0;      // bursts issued
    reg [3:0] f_m_wlast_n = 4'd0;   // bursts whose last beat went out
    reg [7:0] f_m_beat = 8'd0;      // beats of the current burst out
    reg [3:0] f_m_b_n = 4'd0;       // responses taken
    reg [5:0] f_m_w_n = 6'd0;       // beats out

    always @(posedge m_clk) begin
        if (m_rst) begin
            f_m_aw_n <= 4'd0;
            f_m_wlast_n <= 4'd0;
            f_m_beat <= 8'd0;
            f_m_b_n <= 4'd0;
            f_m_w_n <= 6'd0;
        end else begin
            if (f_m_aw) f_m_aw_n <= f_m_aw_n + 4'd1;
            if (f_m_w) begin
                f_m_w_n <= f_m_w_n + 6'd1;
                if (m_axi_wlast) begin
                    f_m_wlast_n <= f_m_wlast_n + 4'd1;
                    f_m_beat <= 8'd0;
                end else begin
                    f_m_beat <= f_m_beat + 8'd1;
                end
            end
            if (f_m_b) f_m_b_n <= f_m_b_n + 4'd1;
        end
    end

    always @(*) begin
        if (!m_rst && m_axi_bvalid) begin
            assume (f_m_b_n < f_m_aw_n && f_m_b_n < f_m_wlast_n);
        end
    end

    /*
     * Data independence: the burst, the beat and the response of the solver's choice, recorded
     * where they are taken. The master side's choice of burst is recorded with its length, so
     * that its WLAST can be checked whatever the slave side did meanwhile.
     */
    localparam AW_BITS = ADDR_WIDTH + ID_WIDTH + 8 + 3 + 2 + 1 + 4 + 3;
    localparam W_BITS = DATA_WIDTH + STRB_WIDTH + 1;
    localparam B_BITS = ID_WIDTH + 2;

    (* anyconst *) reg [3:0] f_pick_aw;
    (* anyconst *) reg [5:0] f_pick_w;
    (* anyconst *) reg [3:0] f_pick_b;
    (* anyconst *) reg [3:0] f_pick_m;
    reg [AW_BITS-1:0] f_aw_seen = {AW_BITS{1'b0}};
    reg [W_BITS-1:0] f_w_seen = {W_BITS{1'b0}};
    reg [B_BITS-1:0] f_b_seen = {B_BITS{1'b0}};
    reg [7:0] f_m_len_seen = 8'd0;

    wire [AW_BITS-1:0] f_s_aw_data = {s_axi_awid, s_axi_awaddr, s_axi_awlen, s_axi_awsize,
        s_axi_awburst, s_axi_awlock, s_axi_awcache, s_axi_awprot};
    wire [AW_BITS-1:0] f_m_aw_data = {m_axi_awid, m_axi_awaddr, m_axi_awlen, m_axi_awsize,
        m_axi_awburst, m_axi_awlock, m_axi_awcache, m_axi_awprot};

    always @(posedge s_clk) begin
        if (!s_rst && f_s_aw && f_s_aw_n == f_pick_aw) f_aw_seen <= f_s_aw_data;
        if (!s_rst && f_s_w && f_s_w_n == f_pick_w) begin
            f_w_seen <= {s_axi_wdata, s_axi_wstrb, s_axi_wlast};
        end
    end

    always @(posedge m_clk) begin
        if (!m_rst && f_m_b && f_m_b_n == f_pick_b) f_b_seen <= {m_axi_bid, m_axi_bresp};
        if (!m_rst && f_m_aw && f_m_aw_n == f_pick_m) f_m_len_seen <= m_axi_awlen;
    end

    always @(*) begin
        if (f_clean) begin
            // Nothing comes out that was not taken in, and each item in its turn.
            promise_aw_taken_first: assert (!m_axi_awvalid || f_m_aw_n < f_s_aw_n);
            promise_w_taken_first: assert (!m_axi_wvalid || f_m_w_n < f_s_w_n);
            promise_b_taken_first: assert (!s_axi_bvalid || f_s_b_n < f_m_b_n);
            promise_aw_kept: assert (!m_axi_awvalid || f_m_aw_n != f_pick_aw
                || f_m_aw_data == f_aw_seen);
            promise_w_kept: assert (!m_axi_wvalid || f_m_w_n != f_pick_w
                || {m_axi_wdata, m_axi_wstrb, m_axi_wlast} == f_w_seen);
            promise_b_kept: assert (!s_axi_bvalid || f_s_b_n != f_pick_b
                || {s_axi_bid, s_axi_bresp} == f_b_seen);
        end
        if (!m_rst && !f_m_reset_again) begin
            // The memory controller always knows which burst a beat belongs to.
            promise_w_after_aw: assert (!m_axi_wvalid || f_m_wlast_n < f_m_aw_n);
            promise_wlast_in_place: assert (!m_axi_wvalid || f_m_wlast_n != f_pick_m
                || m_axi_wlast == (f_m_beat == f_m_len_seen));
        end
    end

    always @(posedge m_clk) begin
        if (f_clean) begin
            cover_burst_crosses: cover (f_m_w && m_axi_wlast && f_m_wlast_n == 4'd0
                && m_axi_awlen == 8'd1);
            cover_aw_stall: cover (m_axi_awvalid && !m_axi_awready && f_m_aw_n == 4'd1);
        end
        if (!m_rst && !f_m_reset_again && f_s_reset_again) begin
            cover_reset_mid_burst: cover (f_m_w && m_axi_wlast && m_axi_wstrb == 0);
        end
    end

    always @(posedge s_clk) begin
        if (f_clean) begin
            cover_response_returns: cover (f_s_b && f_s_b_n == 4'd0);
            cover_w_stall: cover (s_axi_wvalid && !s_axi_wready && f_s_w_n != 6'd0);
        end
    end

`endif

endmodule

`resetall
