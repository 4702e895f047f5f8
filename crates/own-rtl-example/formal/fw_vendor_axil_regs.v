/*
 * Proof wrapper of the vendor register bank (third_party/vendor_ip/VendorAxilRegs.v): its
 * AXI4-Lite port is checked as a slave (the master's rules assumed, the bank's asserted) with
 * the property module the card's proofs use, and the bank keeps what its data sheet promises:
 * it takes a write's address and data together, and a read returns what was last written to
 * the register. The model follows one register, `f_word`, free but fixed for the whole proof:
 * since the solver may pick any, every register is covered.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_vendor_axil_regs #
(
    // The bank's seeded bug (0: none), set only by the proofs of its seeded bugs
    parameter BUG = 0
)
(
    input  wire        S_AXI_ACLK,
    input  wire        S_AXI_ARESETN,
    input  wire [5:0]  S_AXI_AWADDR,
    input  wire [2:0]  S_AXI_AWPROT,
    input  wire        S_AXI_AWVALID,
    input  wire [31:0] S_AXI_WDATA,
    input  wire [3:0]  S_AXI_WSTRB,
    input  wire        S_AXI_WVALID,
    input  wire        S_AXI_BREADY,
    input  wire [5:0]  S_AXI_ARADDR,
    input  wire [2:0]  S_AXI_ARPROT,
    input  wire        S_AXI_ARVALID,
    input  wire        S_AXI_RREADY,
    // The register the model follows (the word address)
    input  wire [3:0]  f_word
);

`ifdef FORMAL

    wire        S_AXI_AWREADY;
    wire        S_AXI_WREADY;
    wire [1:0]  S_AXI_BRESP;
    wire        S_AXI_BVALID;
    wire        S_AXI_ARREADY;
    wire [31:0] S_AXI_RDATA;
    wire [1:0]  S_AXI_RRESP;
    wire        S_AXI_RVALID;

    vendor_axil_regs #(
        .C_S_AXI_DATA_WIDTH(32),
        .C_S_AXI_ADDR_WIDTH(6),
        .BUG(BUG)
    ) dut (
        .S_AXI_ACLK(S_AXI_ACLK),
        .S_AXI_ARESETN(S_AXI_ARESETN),
        .S_AXI_AWADDR(S_AXI_AWADDR),
        .S_AXI_AWPROT(S_AXI_AWPROT),
        .S_AXI_AWVALID(S_AXI_AWVALID),
        .S_AXI_AWREADY(S_AXI_AWREADY),
        .S_AXI_WDATA(S_AXI_WDATA),
        .S_AXI_WSTRB(S_AXI_WSTRB),
        .S_AXI_WVALID(S_AXI_WVALID),
        .S_AXI_WREADY(S_AXI_WREADY),
        .S_AXI_BRESP(S_AXI_BRESP),
        .S_AXI_BVALID(S_AXI_BVALID),
        .S_AXI_BREADY(S_AXI_BREADY),
        .S_AXI_ARADDR(S_AXI_ARADDR),
        .S_AXI_ARPROT(S_AXI_ARPROT),
        .S_AXI_ARVALID(S_AXI_ARVALID),
        .S_AXI_ARREADY(S_AXI_ARREADY),
        .S_AXI_RDATA(S_AXI_RDATA),
        .S_AXI_RRESP(S_AXI_RRESP),
        .S_AXI_RVALID(S_AXI_RVALID),
        .S_AXI_RREADY(S_AXI_RREADY)
    );

    wire rst = !S_AXI_ARESETN;

    faxil_slave #(
        .DATA_WIDTH(32),
        .ADDR_WIDTH(6)
    ) f_s (
        .clk(S_AXI_ACLK),
        .rst(rst),
        .awaddr(S_AXI_AWADDR),
        .awprot(S_AXI_AWPROT),
        .awvalid(S_AXI_AWVALID),
        .awready(S_AXI_AWREADY),
        .wdata(S_AXI_WDATA),
        .wstrb(S_AXI_WSTRB),
        .wvalid(S_AXI_WVALID),
        .wready(S_AXI_WREADY),
        .bresp(S_AXI_BRESP),
        .bvalid(S_AXI_BVALID),
        .bready(S_AXI_BREADY),
        .araddr(S_AXI_ARADDR),
        .arprot(S_AXI_ARPROT),
        .arvalid(S_AXI_ARVALID),
        .arready(S_AXI_ARREADY),
        .rdata(S_AXI_RDATA),
        .rresp(S_AXI_RRESP),
        .rvalid(S_AXI_RVALID),
        .rready(S_AXI_RREADY)
    );

    reg f_past_valid = 1'b0;

    always @(posedge S_AXI_ACLK) begin
        f_past_valid <= 1'b1;
    end

    // The followed register stays the same one.
    always @(posedge S_AXI_ACLK) begin
        if (f_past_valid) begin
            assume (f_word == $past(f_word));
        end
    end

    wire f_aw_fire = S_AXI_AWVALID && S_AXI_AWREADY;
    wire f_w_fire = S_AXI_WVALID && S_AXI_WREADY;
    wire f_ar_fire = S_AXI_ARVALID && S_AXI_ARREADY;
    wire f_r_fire = S_AXI_RVALID && S_AXI_RREADY;

    // The model: the followed register's value, and what the read on R must return when it
    // is of that register.
    reg [31:0] f_value = 32'd0;
    reg [31:0] f_expect = 32'd0;
    reg f_expect_valid = 1'b0;

    integer f_i;

    always @(posedge S_AXI_ACLK) begin
        if (rst) begin
            f_value <= 32'd0;
            f_expect_valid <= 1'b0;
        end else begin
            if (f_aw_fire && f_w_fire && S_AXI_AWADDR[5:2] == f_word) begin
                for (f_i = 0; f_i < 4; f_i = f_i + 1) begin
                    if (S_AXI_WSTRB[f_i]) begin
                        f_value[8*f_i +: 8] <= S_AXI_WDATA[8*f_i +: 8];
                    end
                end
            end
            // A read takes the register as it was before a write at the same edge.
            if (f_ar_fire) begin
                f_expect_valid <= S_AXI_ARADDR[5:2] == f_word;
                f_expect <= f_value;
            end else if (f_r_fire) begin
                f_expect_valid <= 1'b0;
            end
        end
    end

    always @(*) begin
        if (f_past_valid && !rst) begin
            // The address and the data of a write are taken together.
            promise_aw_w_together: assert (f_aw_fire == f_w_fire);
            // A read of the followed register returns what was last written to it.
            promise_read_data: assert (!(S_AXI_RVALID && f_expect_valid) || S_AXI_RDATA == f_expect);
        end
    end

    // The situations a proof must be able to reach, or it proves nothing.
    always @(posedge S_AXI_ACLK) begin
        if (f_past_valid && !rst) begin
            cover_read_back: cover (f_r_fire && f_expect_valid && f_expect != 32'd0);
            cover_r_stall: cover (S_AXI_RVALID && !S_AXI_RREADY && f_ar_fire == 1'b0 && $past(S_AXI_RVALID));
            cover_b_stall: cover (S_AXI_BVALID && !S_AXI_BREADY && $past(S_AXI_BVALID));
        end
    end

`endif

endmodule

`resetall
