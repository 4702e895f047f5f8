/*
 * Proof wrapper of axi_wr_upsizer, 32 to 64 bits: the slave port is checked as an AXI4 slave
 * (the master's rules assumed), the master port as a master (its rules asserted); neither has
 * read channels, which are tied idle. What the converter promises besides the protocol (its
 * header comment): each slave burst becomes at most one master burst (none when it is refused),
 * of full-width INCR beats from an address aligned to the master's beat; an OKAY
 * response is the master side's, passed through; and every byte it writes with its strobe
 * high is a byte the slave wrote at that address. For the last, the slave writes at each byte
 * it strobes the low eight bits of the byte's address, and at each other byte their inverse,
 * so a byte moved to another address or lane, or a byte written that the slave did not
 * strobe, shows.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axi_wr_upsizer #
(
    // Width of the slave data bus in bits (narrow, so that the solver's state stays small)
    parameter S_DATA_WIDTH = 32,
    // Width of the slave byte address in bits
    parameter S_ADDR_WIDTH = 32,
    // Width of the master data bus in bits: two slave beats a master beat
    parameter M_DATA_WIDTH = 64,
    // Width of the master byte address in bits
    parameter M_ADDR_WIDTH = 16,
    // Width of the IDs
    parameter ID_WIDTH = 1,
    // Width of the slave strobes
    parameter S_STRB_WIDTH = (S_DATA_WIDTH/8),
    // Width of the master strobes
    parameter M_STRB_WIDTH = (M_DATA_WIDTH/8),
    // The converter's seeded bug (1: a narrow beat's bytes taken from lane 0; 2: a narrow
    // beat's top lane dropped), 0 for none
    parameter BUG = 0
)
(
    input  wire                        clk,
    input  wire                        rst,
    input  wire [ID_WIDTH-1:0]         s_axi_awid,
    input  wire [S_ADDR_WIDTH-1:0]     s_axi_awaddr,
    input  wire [7:0]                  s_axi_awlen,
    input  wire [2:0]                  s_axi_awsize,
    input  wire [1:0]                  s_axi_awburst,
    input  wire                        s_axi_awlock,
    input  wire [3:0]                  s_axi_awcache,
    input  wire [2:0]                  s_axi_awprot,
    input  wire                        s_axi_awvalid,
    input  wire [S_DATA_WIDTH-1:0]     s_axi_wdata,
    input  wire [S_STRB_WIDTH-1:0]     s_axi_wstrb,
    input  wire                        s_axi_wlast,
    input  wire                        s_axi_wvalid,
    input  wire                        s_axi_bready,
    input  wire                        m_axi_awready,
    input  wire                        m_axi_wready,
    input  wire [ID_WIDTH-1:0]         m_axi_bid,
    input  wire [1:0]                  m_axi_bresp,
    input  wire                        m_axi_bvalid
);

`ifdef FORMAL

    wire                        s_axi_awready;
    wire                        s_axi_wready;
    wire [ID_WIDTH-1:0]         s_axi_bid;
    wire [1:0]                  s_axi_bresp;
    wire                        s_axi_bvalid;
    wire [ID_WIDTH-1:0]         m_axi_awid;
    wire [M_ADDR_WIDTH-1:0]     m_axi_awaddr;
    wire [7:0]                  m_axi_awlen;
    wire [2:0]                  m_axi_awsize;
    wire [1:0]                  m_axi_awburst;
    wire                        m_axi_awlock;
    wire [3:0]                  m_axi_awcache;
    wire [2:0]                  m_axi_awprot;
    wire                        m_axi_awvalid;
    wire [M_DATA_WIDTH-1:0]     m_axi_wdata;
    wire [M_STRB_WIDTH-1:0]     m_axi_wstrb;
    wire                        m_axi_wlast;
    wire                        m_axi_wvalid;
    wire                        m_axi_bready;
    wire                        addr_error;
    wire                        burst_error;

    axi_wr_upsizer #(
        .S_DATA_WIDTH(S_DATA_WIDTH),
        .S_ADDR_WIDTH(S_ADDR_WIDTH),
        .M_DATA_WIDTH(M_DATA_WIDTH),
        .M_ADDR_WIDTH(M_ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH),
        .S_STRB_WIDTH(S_STRB_WIDTH),
        .M_STRB_WIDTH(M_STRB_WIDTH),
        .BUG(BUG)
    ) dut (
        .clk(clk),
        .rst(rst),
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
        .m_axi_bready(m_axi_bready),
        .addr_error(addr_error),
        .burst_error(burst_error)
    );

    faxi_slave #(
        .DATA_WIDTH(S_DATA_WIDTH),
        .ADDR_WIDTH(S_ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_in (
        .clk(clk),
        .rst(rst),
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
        .araddr({S_ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({ID_WIDTH{1'b0}}),
        .rdata({S_DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    faxi_master #(
        .DATA_WIDTH(M_DATA_WIDTH),
        .ADDR_WIDTH(M_ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_out (
        .clk(clk),
        .rst(rst),
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
        .araddr({M_ADDR_WIDTH{1'b0}}),
        .arlen(8'd0),
        .arsize(3'd0),
        .arburst(2'b01),
        .arvalid(1'b0),
        .arready(1'b0),
        .rid({ID_WIDTH{1'b0}}),
        .rdata({M_DATA_WIDTH{1'b0}}),
        .rresp(2'b00),
        .rlast(1'b0),
        .rvalid(1'b0),
        .rready(1'b0)
    );

    // Bursts taken on each side since reset.
    reg [7:0] f_s_bursts = 8'd0;
    reg [7:0] f_m_bursts = 8'd0;

    always @(posedge clk) begin
        if (rst) begin
            f_s_bursts <= 8'd0;
            f_m_bursts <= 8'd0;
        end else begin
            if (s_axi_awvalid && s_axi_awready) f_s_bursts <= f_s_bursts + 8'd1;
            if (m_axi_awvalid && m_axi_awready) f_m_bursts <= f_m_bursts + 8'd1;
        end
    end

    localparam M_BYTES = M_DATA_WIDTH / 8;

    // The slave behind the master port answers only writes it has taken whole (the rule table's
    // `no_b_without_request` needs a scoreboard per ID and has no formal form; with one ID a
    // count of bursts whose address and last data were taken, less those answered, says it).
    reg [7:0] f_m_aw = 8'd0;
    reg [7:0] f_m_wlast = 8'd0;
    reg [7:0] f_m_b = 8'd0;

    always @(posedge clk) begin
        if (rst) begin
            f_m_aw <= 8'd0;
            f_m_wlast <= 8'd0;
            f_m_b <= 8'd0;
        end else begin
            if (m_axi_awvalid && m_axi_awready) f_m_aw <= f_m_aw + 8'd1;
            if (m_axi_wvalid && m_axi_wready && m_axi_wlast) f_m_wlast <= f_m_wlast + 8'd1;
            if (m_axi_bvalid && m_axi_bready) f_m_b <= f_m_b + 8'd1;
        end
    end

    always @(*) begin
        if (!rst && m_axi_bvalid) begin
            assume (f_m_b < f_m_aw && f_m_b < f_m_wlast);
        end
    end

    // The address of beat `beat` of an INCR burst at `addr` of size `size` (low eight bits): the
    // first beat at the address, each one after at the next size-aligned address.
    function [7:0] f_beat_addr(input [7:0] addr, input [2:0] size, input [7:0] beat);
        f_beat_addr = (beat == 8'd0) ? addr : (((addr >> size) + beat) << size);
    endfunction

    localparam [7:0] S_BYTES = S_DATA_WIDTH / 8;
    localparam [7:0] M_LANES = M_DATA_WIDTH / 8;

    // The slave burst whose data the converter takes: it takes a burst's data only after its
    // address, one burst at a time, and counts the beats by the length (not by WLAST).
    reg [7:0] f_s_addr = 8'd0;
    reg [2:0] f_s_size = 3'd0;
    reg [7:0] f_s_beat = 8'd0;

    always @(posedge clk) begin
        if (s_axi_awvalid && s_axi_awready) begin
            f_s_addr <= s_axi_awaddr[7:0];
            f_s_size <= s_axi_awsize;
            f_s_beat <= 8'd0;
        end else if (s_axi_wvalid && s_axi_wready) begin
            f_s_beat <= f_s_beat + 8'd1;
        end
    end

    wire [7:0] f_s_at = f_beat_addr(f_s_addr, f_s_size, f_s_beat);
    wire [8:0] f_s_end = (({1'b0, f_s_at} >> f_s_size) + 9'd1) << f_s_size;

    // The master burst whose data goes out: the address offered until it is taken, then the
    // one taken, kept by burst number (the addresses run at most four bursts ahead of their
    // data, promised below).
    reg [7:0] f_m_addr [0:3];
    reg [7:0] f_m_beat = 8'd0;

    always @(posedge clk) begin
        if (m_axi_awvalid && m_axi_awready) begin
            f_m_addr[f_m_aw[1:0]] <= m_axi_awaddr[7:0];
        end
        if (rst) begin
            f_m_beat <= 8'd0;
        end else if (m_axi_wvalid && m_axi_wready) begin
            f_m_beat <= m_axi_wlast ? 8'd0 : f_m_beat + 8'd1;
        end
    end

    wire [7:0] f_m_base = (f_m_aw > f_m_wlast) ? f_m_addr[f_m_wlast[1:0]] : m_axi_awaddr[7:0];
    wire [7:0] f_m_at = (f_m_base & ~(M_LANES - 8'd1)) + (f_m_beat << $clog2(M_BYTES));

    wire [M_STRB_WIDTH-1:0] f_m_lane_ok;
    // Per slave lane, whether the beat strobes a byte of its own.
    wire [S_STRB_WIDTH-1:0] f_s_strobed;

    genvar f_lane;
    generate
        for (f_lane = 0; f_lane < S_STRB_WIDTH; f_lane = f_lane + 1) begin : g_slave
            localparam [7:0] LANE = f_lane;
            wire [7:0] f_byte = (f_s_at & ~(S_BYTES - 8'd1)) | LANE;
            wire f_in_beat = f_byte >= f_s_at && {1'b0, f_byte} < f_s_end;

            assign f_s_strobed[f_lane] = s_axi_wstrb[f_lane] && f_in_beat;

            // What the slave writes: the byte's address where it strobes a byte of its beat,
            // the inverse elsewhere.
            always @(*) begin
                if (!rst && s_axi_wvalid && s_axi_wready) begin
                    assume (s_axi_wdata[f_lane*8 +: 8]
                        == ((s_axi_wstrb[f_lane] && f_in_beat) ? f_byte : ~f_byte));
                end
            end
        end
        for (f_lane = 0; f_lane < M_STRB_WIDTH; f_lane = f_lane + 1) begin : g_master
            localparam [7:0] LANE = f_lane;

            assign f_m_lane_ok[f_lane] = !m_axi_wstrb[f_lane]
                || m_axi_wdata[f_lane*8 +: 8] == ((f_m_at & ~(M_LANES - 8'd1)) | LANE);
        end
    endgenerate

    always @(*) begin
        if (!rst && m_axi_wvalid) begin
            promise_bytes_to_their_address: assert (&f_m_lane_ok);
        end
    end

    /*
     * No strobed byte is lost: per burst, the master writes as many bytes with their strobe
     * high as the slave strobed within its beats (the bytes of a burst have distinct
     * addresses, and the promise above puts each at its own). A refused burst writes nothing
     * and is left out. The slave's counts wait by burst number, as the addresses do.
     */
    function [7:0] f_ones(input [M_STRB_WIDTH-1:0] v);
        integer f_k;
        begin
            f_ones = 8'd0;
            for (f_k = 0; f_k < M_STRB_WIDTH; f_k = f_k + 1) begin
                f_ones = f_ones + {7'd0, v[f_k]};
            end
        end
    endfunction

    reg [7:0] f_s_len = 8'd0;
    reg       f_s_refused = 1'b0;
    reg [7:0] f_s_count = 8'd0;    // bytes strobed so far in the slave burst
    reg [7:0] f_s_done_n = 8'd0;   // slave bursts taken whole and not refused
    reg [7:0] f_s_done [0:3];      // their byte counts, by burst number
    reg [7:0] f_m_count = 8'd0;    // bytes written so far in the master burst

    wire [7:0] f_s_beat_bytes = f_ones({{(M_STRB_WIDTH-S_STRB_WIDTH){1'b0}}, f_s_strobed});
    wire [7:0] f_m_beat_bytes = f_ones(m_axi_wstrb);

    always @(posedge clk) begin
        if (s_axi_awvalid && s_axi_awready) begin
            f_s_len <= s_axi_awlen;
            f_s_refused <= s_axi_awburst != 2'b01
                || s_axi_awaddr[S_ADDR_WIDTH-1:M_ADDR_WIDTH] != 0;
        end
        if (rst) begin
            f_s_count <= 8'd0;
            f_s_done_n <= 8'd0;
            f_m_count <= 8'd0;
        end else begin
            if (s_axi_wvalid && s_axi_wready) begin
                if (f_s_beat == f_s_len) begin
                    f_s_count <= 8'd0;
                    if (!f_s_refused) begin
                        f_s_done[f_s_done_n[1:0]] <= f_s_count + f_s_beat_bytes;
                        f_s_done_n <= f_s_done_n + 8'd1;
                    end
                end else begin
                    f_s_count <= f_s_count + f_s_beat_bytes;
                end
            end
            if (m_axi_wvalid && m_axi_wready) begin
                f_m_count <= m_axi_wlast ? 8'd0 : f_m_count + f_m_beat_bytes;
            end
        end
    end

    // The slave puts WLAST on each burst's last beat (the rule table's `wlast_on_last_beat`
    // needs a count of beats per burst and has no formal form; the converter counts beats by
    // the length, and takes a burst's data only after its address, so the count is here).
    always @(*) begin
        if (!rst && s_axi_wvalid && s_axi_wready) begin
            assume (s_axi_wlast == (f_s_beat == f_s_len));
        end
    end

    always @(*) begin
        if (!rst && m_axi_wvalid && m_axi_wlast) begin
            promise_every_strobed_byte_written: assert (f_s_done_n > f_m_wlast
                && f_m_count + f_m_beat_bytes == f_s_done[f_m_wlast[1:0]]);
        end
    end

    always @(*) begin
        if (!rst) begin
            promise_addresses_not_far_ahead: assert (f_m_aw <= f_m_wlast + 8'd4);
            promise_one_burst_each: assert (f_m_bursts <= f_s_bursts);
            if (m_axi_awvalid) begin
                promise_full_width_incr: assert (m_axi_awburst == 2'b01
                    && m_axi_awsize == $clog2(M_BYTES));
                promise_aligned: assert (m_axi_awaddr % M_BYTES == 0);
            end
            // A refused burst's response is the converter's own (DECERR or SLVERR); an OKAY
            // can only be the master side's, passed through as it is.
            promise_okay_passed_through: assert (!s_axi_bvalid || s_axi_bresp != 2'b00
                || (m_axi_bvalid && s_axi_bid == m_axi_bid && m_axi_bresp == 2'b00));
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_burst_converted: cover (m_axi_wvalid && m_axi_wready && m_axi_wlast && f_m_bursts == 8'd1);
            cover_narrow_burst: cover (s_axi_awvalid && s_axi_awready && s_axi_awsize == 3'd0);
            cover_refused: cover (burst_error);
        end
        cover_reset_mid_burst: cover (rst && $past(m_axi_wvalid && !m_axi_wlast));
    end

`endif

endmodule

`resetall
