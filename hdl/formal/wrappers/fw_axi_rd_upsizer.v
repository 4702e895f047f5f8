/*
 * Proof wrapper of axi_rd_upsizer, 32 to 64 bits: the slave port is checked as an AXI4 slave
 * (the master's rules assumed), the master port as a master (its rules asserted); neither has
 * write channels, which are tied idle. The memory behind the master port is a legal slave of
 * one ID: it answers the bursts it took, in order, each with its length's beats and RLAST on
 * the last (the rule table's per-ID rules need a scoreboard; with one ID a queue of lengths
 * says them). What the converter promises (its header comment): every slave burst is answered
 * in issue order with its own ID and exactly its length's beats, RLAST on the last, and every
 * byte it answers with is the byte at its address. For the last, the memory holds at each byte
 * the low eight bits of its address, so a byte from another address, another beat or another
 * lane shows (the card's deliberate fault sends a beat's data again in the next beat's place).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axi_rd_upsizer #
(
    // Width of the slave data bus in bits (narrow, so that the solver's state stays small)
    parameter S_DATA_WIDTH = 32,
    // Width of the slave byte address in bits
    parameter S_ADDR_WIDTH = 32,
    // Width of the slave ID
    parameter S_ID_WIDTH = 1,
    // Width of the master data bus in bits: two slave beats a master beat
    parameter M_DATA_WIDTH = 64,
    // Width of the master byte address in bits
    parameter M_ADDR_WIDTH = 16,
    // Width of the master ID
    parameter M_ID_WIDTH = 1,
    // Bursts in flight at most
    parameter OUTSTANDING = 2,
    // The card's deliberate fault (the dropped read beat), built in and on when 1
    parameter FAULT_DROP_BEAT = 0
)
(
    input  wire                        clk,
    input  wire                        rst,
    input  wire [S_ID_WIDTH-1:0]       s_axi_arid,
    input  wire [S_ADDR_WIDTH-1:0]     s_axi_araddr,
    input  wire [7:0]                  s_axi_arlen,
    input  wire [2:0]                  s_axi_arsize,
    input  wire [1:0]                  s_axi_arburst,
    input  wire                        s_axi_arlock,
    input  wire [3:0]                  s_axi_arcache,
    input  wire [2:0]                  s_axi_arprot,
    input  wire                        s_axi_arvalid,
    input  wire                        s_axi_rready,
    input  wire                        m_axi_arready,
    input  wire [M_ID_WIDTH-1:0]       m_axi_rid,
    input  wire [M_DATA_WIDTH-1:0]     m_axi_rdata,
    input  wire [1:0]                  m_axi_rresp,
    input  wire                        m_axi_rlast,
    input  wire                        m_axi_rvalid
);

`ifdef FORMAL

    wire                        s_axi_arready;
    wire [S_ID_WIDTH-1:0]       s_axi_rid;
    wire [S_DATA_WIDTH-1:0]     s_axi_rdata;
    wire [1:0]                  s_axi_rresp;
    wire                        s_axi_rlast;
    wire                        s_axi_rvalid;
    wire [M_ID_WIDTH-1:0]       m_axi_arid;
    wire [M_ADDR_WIDTH-1:0]     m_axi_araddr;
    wire [7:0]                  m_axi_arlen;
    wire [2:0]                  m_axi_arsize;
    wire [1:0]                  m_axi_arburst;
    wire                        m_axi_arlock;
    wire [3:0]                  m_axi_arcache;
    wire [2:0]                  m_axi_arprot;
    wire                        m_axi_arvalid;
    wire                        m_axi_rready;
    wire                        addr_error;
    wire                        burst_error;

    axi_rd_upsizer #(
        .S_DATA_WIDTH(S_DATA_WIDTH),
        .S_ADDR_WIDTH(S_ADDR_WIDTH),
        .S_ID_WIDTH(S_ID_WIDTH),
        .M_DATA_WIDTH(M_DATA_WIDTH),
        .M_ADDR_WIDTH(M_ADDR_WIDTH),
        .M_ID_WIDTH(M_ID_WIDTH),
        .OUTSTANDING(OUTSTANDING),
        .FAULT_DROP_BEAT(FAULT_DROP_BEAT)
    ) dut (
        .clk(clk),
        .rst(rst),
        .s_axi_arid(s_axi_arid),
        .s_axi_araddr(s_axi_araddr),
        .s_axi_arlen(s_axi_arlen),
        .s_axi_arsize(s_axi_arsize),
        .s_axi_arburst(s_axi_arburst),
        .s_axi_arlock(s_axi_arlock),
        .s_axi_arcache(s_axi_arcache),
        .s_axi_arprot(s_axi_arprot),
        .s_axi_arvalid(s_axi_arvalid),
        .s_axi_arready(s_axi_arready),
        .s_axi_rid(s_axi_rid),
        .s_axi_rdata(s_axi_rdata),
        .s_axi_rresp(s_axi_rresp),
        .s_axi_rlast(s_axi_rlast),
        .s_axi_rvalid(s_axi_rvalid),
        .s_axi_rready(s_axi_rready),
        .m_axi_arid(m_axi_arid),
        .m_axi_araddr(m_axi_araddr),
        .m_axi_arlen(m_axi_arlen),
        .m_axi_arsize(m_axi_arsize),
        .m_axi_arburst(m_axi_arburst),
        .m_axi_arlock(m_axi_arlock),
        .m_axi_arcache(m_axi_arcache),
        .m_axi_arprot(m_axi_arprot),
        .m_axi_arvalid(m_axi_arvalid),
        .m_axi_arready(m_axi_arready),
        .m_axi_rid(m_axi_rid),
        .m_axi_rdata(m_axi_rdata),
        .m_axi_rresp(m_axi_rresp),
        .m_axi_rlast(m_axi_rlast),
        .m_axi_rvalid(m_axi_rvalid),
        .m_axi_rready(m_axi_rready),
        .addr_error(addr_error),
        .burst_error(burst_error),
        .fault_drop_beat_en(FAULT_DROP_BEAT == 1)
    );

    faxi_slave #(
        .DATA_WIDTH(S_DATA_WIDTH),
        .ADDR_WIDTH(S_ADDR_WIDTH),
        .ID_WIDTH(S_ID_WIDTH)
    ) f_in (
        .clk(clk),
        .rst(rst),
        .awid({S_ID_WIDTH{1'b0}}),
        .awaddr({S_ADDR_WIDTH{1'b0}}),
        .awlen(8'd0),
        .awsize(3'd0),
        .awburst(2'b01),
        .awvalid(1'b0),
        .awready(1'b0),
        .wdata({S_DATA_WIDTH{1'b0}}),
        .wstrb({(S_DATA_WIDTH/8){1'b0}}),
        .wlast(1'b0),
        .wvalid(1'b0),
        .wready(1'b0),
        .bid({S_ID_WIDTH{1'b0}}),
        .bresp(2'b00),
        .bvalid(1'b0),
        .bready(1'b0),
        .arid(s_axi_arid),
        .araddr(s_axi_araddr),
        .arlen(s_axi_arlen),
        .arsize(s_axi_arsize),
        .arburst(s_axi_arburst),
        .arvalid(s_axi_arvalid),
        .arready(s_axi_arready),
        .rid(s_axi_rid),
        .rdata(s_axi_rdata),
        .rresp(s_axi_rresp),
        .rlast(s_axi_rlast),
        .rvalid(s_axi_rvalid),
        .rready(s_axi_rready)
    );

    faxi_master #(
        .DATA_WIDTH(M_DATA_WIDTH),
        .ADDR_WIDTH(M_ADDR_WIDTH),
        .ID_WIDTH(M_ID_WIDTH)
    ) f_out (
        .clk(clk),
        .rst(rst),
        .awid({M_ID_WIDTH{1'b0}}),
        .awaddr({M_ADDR_WIDTH{1'b0}}),
        .awlen(8'd0),
        .awsize(3'd0),
        .awburst(2'b01),
        .awvalid(1'b0),
        .awready(1'b0),
        .wdata({M_DATA_WIDTH{1'b0}}),
        .wstrb({(M_DATA_WIDTH/8){1'b0}}),
        .wlast(1'b0),
        .wvalid(1'b0),
        .wready(1'b0),
        .bid({M_ID_WIDTH{1'b0}}),
        .bresp(2'b00),
        .bvalid(1'b0),
        .bready(1'b0),
        .arid(m_axi_arid),
        .araddr(m_axi_araddr),
        .arlen(m_axi_arlen),
        .arsize(m_axi_arsize),
        .arburst(m_axi_arburst),
        .arvalid(m_axi_arvalid),
        .arready(m_axi_arready),
        .rid(m_axi_rid),
        .rdata(m_axi_rdata),
        .rresp(m_axi_rresp),
        .rlast(m_axi_rlast),
        .rvalid(m_axi_rvalid),
        .rready(m_axi_rready)
    );

    // A queue of burst lengths (and, on the slave side, IDs) in issue order, four deep, and
    // the beats taken of the burst at its head.
    localparam QD = 4;

    reg [7:0] f_m_len [0:QD-1];
    // Per burst, the low address bits and the size: what a beat's address follows from.
    reg [7:0] f_m_addr [0:QD-1];
    reg [2:0] f_m_size [0:QD-1];
    reg [7:0] f_s_addr [0:QD-1];
    reg [2:0] f_s_size [0:QD-1];
    reg [2:0] f_m_count = 3'd0;
    reg [7:0] f_m_beat = 8'd0;
    reg [7:0] f_s_len [0:QD-1];
    reg [S_ID_WIDTH-1:0] f_s_id [0:QD-1];
    reg [2:0] f_s_count = 3'd0;
    reg [7:0] f_s_beat = 8'd0;

    wire f_m_ar = m_axi_arvalid && m_axi_arready;
    wire f_m_r = m_axi_rvalid && m_axi_rready;
    wire f_m_pop = f_m_r && m_axi_rlast;
    wire f_s_ar = s_axi_arvalid && s_axi_arready;
    wire f_s_r = s_axi_rvalid && s_axi_rready;
    wire f_s_pop = f_s_r && s_axi_rlast;

    integer f_i;

    always @(posedge clk) begin
        if (rst) begin
            f_m_count <= 3'd0;
            f_m_beat <= 8'd0;
            f_s_count <= 3'd0;
            f_s_beat <= 8'd0;
        end else begin
            if (f_m_pop) begin
                for (f_i = 0; f_i < QD - 1; f_i = f_i + 1) begin
                    f_m_len[f_i] <= f_m_len[f_i + 1];
                    f_m_addr[f_i] <= f_m_addr[f_i + 1];
                    f_m_size[f_i] <= f_m_size[f_i + 1];
                end
            end
            if (f_m_ar) begin
                f_m_len[f_m_count - {2'd0, f_m_pop}] <= m_axi_arlen;
                f_m_addr[f_m_count - {2'd0, f_m_pop}] <= m_axi_araddr[7:0];
                f_m_size[f_m_count - {2'd0, f_m_pop}] <= m_axi_arsize;
            end
            f_m_count <= f_m_count + {2'd0, f_m_ar} - {2'd0, f_m_pop};
            if (f_m_r) f_m_beat <= m_axi_rlast ? 8'd0 : f_m_beat + 8'd1;
            if (f_s_pop) begin
                for (f_i = 0; f_i < QD - 1; f_i = f_i + 1) begin
                    f_s_len[f_i] <= f_s_len[f_i + 1];
                    f_s_id[f_i] <= f_s_id[f_i + 1];
                    f_s_addr[f_i] <= f_s_addr[f_i + 1];
                    f_s_size[f_i] <= f_s_size[f_i + 1];
                end
            end
            if (f_s_ar) begin
                f_s_len[f_s_count - {2'd0, f_s_pop}] <= s_axi_arlen;
                f_s_id[f_s_count - {2'd0, f_s_pop}] <= s_axi_arid;
                f_s_addr[f_s_count - {2'd0, f_s_pop}] <= s_axi_araddr[7:0];
                f_s_size[f_s_count - {2'd0, f_s_pop}] <= s_axi_arsize;
            end
            f_s_count <= f_s_count + {2'd0, f_s_ar} - {2'd0, f_s_pop};
            if (f_s_r) f_s_beat <= s_axi_rlast ? 8'd0 : f_s_beat + 8'd1;
        end
    end

    // The address of beat `beat` of an INCR burst at `addr` of size `size` (low eight bits): the
    // first beat at the address, each one after at the next size-aligned address.
    function [7:0] f_beat_addr(input [7:0] addr, input [2:0] size, input [7:0] beat);
        f_beat_addr = (beat == 8'd0) ? addr : (((addr >> size) + beat) << size);
    endfunction

    localparam [7:0] M_BYTES = M_DATA_WIDTH / 8;
    localparam [7:0] S_BYTES = S_DATA_WIDTH / 8;

    wire [7:0] f_m_at = f_beat_addr(f_m_addr[0], f_m_size[0], f_m_beat);
    wire [7:0] f_s_at = f_beat_addr(f_s_addr[0], f_s_size[0], f_s_beat);
    // The slave beat's bytes: from its address up to the end of its size-aligned block.
    wire [8:0] f_s_end = (({1'b0, f_s_at} >> f_s_size[0]) + 9'd1) << f_s_size[0];

    // The memory: each byte of a master beat is the low eight bits of its address.
    // Per slave lane, whether its byte is right or not carried by the beat.
    wire [S_BYTES-1:0] f_lane_ok;

    genvar f_lane;
    generate
        for (f_lane = 0; f_lane < M_BYTES; f_lane = f_lane + 1) begin : g_memory
            localparam [7:0] LANE = f_lane;

            always @(*) begin
                if (!rst && m_axi_rvalid && f_m_count != 3'd0) begin
                    assume (m_axi_rdata[f_lane*8 +: 8] == ((f_m_at & ~(M_BYTES - 8'd1)) | LANE));
                end
            end
        end
        for (f_lane = 0; f_lane < S_BYTES; f_lane = f_lane + 1) begin : g_bytes
            // This lane's byte address in the slave beat, and whether the beat carries it.
            localparam [7:0] LANE = f_lane;
            wire [7:0] f_byte = (f_s_at & ~(S_BYTES - 8'd1)) | LANE;
            wire f_carried = f_byte >= f_s_at && {1'b0, f_byte} < f_s_end;

            assign f_lane_ok[f_lane] = !f_carried || s_axi_rdata[f_lane*8 +: 8] == f_byte;
        end
    endgenerate

    always @(*) begin
        if (!rst && s_axi_rvalid && f_s_count != 3'd0 && s_axi_rresp == 2'b00) begin
            promise_bytes_from_their_address: assert (&f_lane_ok);
        end
    end

    always @(*) begin
        // Never more in flight than the queues hold (the converter keeps OUTSTANDING).
        assume (f_s_count < QD);
        if (!rst && m_axi_rvalid) begin
            assume (f_m_count != 3'd0);
            assume (m_axi_rlast == (f_m_beat == f_m_len[0]));
        end
        if (!rst && s_axi_rvalid) begin
            promise_answers_a_burst_taken: assert (f_s_count != 3'd0);
            promise_in_issue_order_with_its_id: assert (f_s_count == 3'd0
                || s_axi_rid == f_s_id[0]);
            promise_rlast_on_its_last_beat: assert (f_s_count == 3'd0
                || s_axi_rlast == (f_s_beat == f_s_len[0]));
        end
    end

    always @(posedge clk) begin
        if (!rst) begin
            cover_burst_answered: cover (f_s_pop && f_s_len[0] == 8'd2);
            cover_two_in_flight: cover (f_s_count == 3'd2 && f_s_r);
            cover_refused: cover (burst_error);
        end
        cover_reset_mid_burst: cover (rst && $past(s_axi_rvalid && !s_axi_rlast));
    end

`endif

endmodule

`resetall
