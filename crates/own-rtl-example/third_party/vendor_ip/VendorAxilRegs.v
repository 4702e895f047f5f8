// Vendor AXI4-Lite register bank, written for card-sim's own-RTL example in the style of the
// register slaves that FPGA tools generate: upper-case port names, the write address and data
// taken together in one cycle, and sixteen read/write registers that read back what was
// written (so the memory-like AXI-Lite fuzzer can check it).
//
// BUG seeds one bug of the kind published for such generated slaves:
//   1 - ARREADY does not wait for a read response that is still held by RREADY low: a second
//       read is taken and its data overwrites the first one's, which is lost. Only a master
//       with a second read outstanding while R is back-pressured sees it.
//   2 - the register write takes S_AXI_WDATA one cycle after the handshake. Only a master
//       that changes WDATA after the handshake (garbage while WVALID is low, or the next
//       write right behind) sees it.

`timescale 1ns / 1ps
`default_nettype none

module vendor_axil_regs #
(
    // Width of S_AXI_WDATA and S_AXI_RDATA.
    parameter integer C_S_AXI_DATA_WIDTH = 32,
    // Width of the byte addresses; the bank decodes all of them.
    parameter integer C_S_AXI_ADDR_WIDTH = 6,
    // The seeded bug (0: none; see above).
    parameter integer BUG                = 0
)
(
    input  wire                            S_AXI_ACLK,
    input  wire                            S_AXI_ARESETN,
    input  wire [C_S_AXI_ADDR_WIDTH-1:0]   S_AXI_AWADDR,
    input  wire [2:0]                      S_AXI_AWPROT,
    input  wire                            S_AXI_AWVALID,
    output reg                             S_AXI_AWREADY,
    input  wire [C_S_AXI_DATA_WIDTH-1:0]   S_AXI_WDATA,
    input  wire [C_S_AXI_DATA_WIDTH/8-1:0] S_AXI_WSTRB,
    input  wire                            S_AXI_WVALID,
    output reg                             S_AXI_WREADY,
    output wire [1:0]                      S_AXI_BRESP,
    output reg                             S_AXI_BVALID,
    input  wire                            S_AXI_BREADY,
    input  wire [C_S_AXI_ADDR_WIDTH-1:0]   S_AXI_ARADDR,
    input  wire [2:0]                      S_AXI_ARPROT,
    input  wire                            S_AXI_ARVALID,
    output reg                             S_AXI_ARREADY,
    output reg  [C_S_AXI_DATA_WIDTH-1:0]   S_AXI_RDATA,
    output wire [1:0]                      S_AXI_RRESP,
    output reg                             S_AXI_RVALID,
    input  wire                            S_AXI_RREADY
);

localparam integer ADDR_LSB = $clog2(C_S_AXI_DATA_WIDTH / 8);
localparam integer WORDS    = 1 << (C_S_AXI_ADDR_WIDTH - ADDR_LSB);
localparam [1:0]   OKAY     = 2'b00;

initial begin
    if (C_S_AXI_DATA_WIDTH != 32 && C_S_AXI_DATA_WIDTH != 64) begin
        $error("vendor_axil_regs: C_S_AXI_DATA_WIDTH must be 32 or 64");
        $finish;
    end
    if (BUG < 0 || BUG > 2) begin
        $error("vendor_axil_regs: BUG must be 0, 1 or 2");
        $finish;
    end
end

reg [C_S_AXI_DATA_WIDTH-1:0] regs [0:WORDS-1];

assign S_AXI_BRESP = OKAY;
assign S_AXI_RRESP = OKAY;

// A write is taken when address and data are both offered and the previous response has gone
// or goes on this edge; AWREADY and WREADY rise together for the handshake cycle.
wire wr_take = !S_AXI_AWREADY && S_AXI_AWVALID && S_AXI_WVALID
               && (!S_AXI_BVALID || S_AXI_BREADY);
wire wr_fire = S_AXI_AWREADY && S_AXI_AWVALID && S_AXI_WREADY && S_AXI_WVALID;

// A read is taken when the previous read's data has gone or goes on this edge (BUG 1 forgets
// to wait for it).
wire r_free  = !S_AXI_RVALID || S_AXI_RREADY || BUG == 1;
wire rd_take = !S_AXI_ARREADY && S_AXI_ARVALID && r_free;
wire rd_fire = S_AXI_ARREADY && S_AXI_ARVALID;

// BUG 2 writes one cycle late, from the data bus as it is then.
reg                            late_fire;
reg [C_S_AXI_ADDR_WIDTH-1:0]   late_addr;
reg [C_S_AXI_DATA_WIDTH/8-1:0] late_strb;

wire                            do_write = BUG == 2 ? late_fire : wr_fire;
wire [C_S_AXI_ADDR_WIDTH-1:0]   w_addr   = BUG == 2 ? late_addr : S_AXI_AWADDR;
wire [C_S_AXI_DATA_WIDTH/8-1:0] w_strb   = BUG == 2 ? late_strb : S_AXI_WSTRB;

integer i;

always @(posedge S_AXI_ACLK) begin
    if (!S_AXI_ARESETN) begin
        S_AXI_AWREADY <= 1'b0;
        S_AXI_WREADY  <= 1'b0;
        S_AXI_BVALID  <= 1'b0;
        S_AXI_ARREADY <= 1'b0;
        S_AXI_RVALID  <= 1'b0;
        S_AXI_RDATA   <= {C_S_AXI_DATA_WIDTH{1'b0}};
        late_fire     <= 1'b0;
        late_addr     <= {C_S_AXI_ADDR_WIDTH{1'b0}};
        late_strb     <= {(C_S_AXI_DATA_WIDTH/8){1'b0}};
        for (i = 0; i < WORDS; i = i + 1) begin
            regs[i] <= {C_S_AXI_DATA_WIDTH{1'b0}};
        end
    end else begin
        S_AXI_AWREADY <= wr_take;
        S_AXI_WREADY  <= wr_take;
        if (wr_fire) begin
            S_AXI_BVALID <= 1'b1;
        end else if (S_AXI_BREADY) begin
            S_AXI_BVALID <= 1'b0;
        end
        late_fire <= wr_fire;
        late_addr <= S_AXI_AWADDR;
        late_strb <= S_AXI_WSTRB;
        if (do_write) begin
            for (i = 0; i < C_S_AXI_DATA_WIDTH / 8; i = i + 1) begin
                if (w_strb[i]) begin
                    regs[w_addr[C_S_AXI_ADDR_WIDTH-1:ADDR_LSB]][8*i +: 8] <= S_AXI_WDATA[8*i +: 8];
                end
            end
        end

        S_AXI_ARREADY <= rd_take;
        if (rd_fire) begin
            S_AXI_RVALID <= 1'b1;
            S_AXI_RDATA  <= regs[S_AXI_ARADDR[C_S_AXI_ADDR_WIDTH-1:ADDR_LSB]];
        end else if (S_AXI_RREADY) begin
            S_AXI_RVALID <= 1'b0;
        end
    end
end

endmodule

`default_nettype wire
