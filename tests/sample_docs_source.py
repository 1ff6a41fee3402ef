"""The text of the sample_docs Word and PDF files, written for this project.

The subject is the Veltrana Hearth, a made-up home battery system; the .txt and .md files in
sample_docs/ are on the same subject and are their own source. ``build_sample_docs.py`` turns the
blocks below into files, and ``test_ingest_sample_docs.py`` checks the committed files still say
exactly this. Blocks: ("title" | "h" | "p" | "bullet", text) or ("table", rows; the first row is the
header). PDF text stays within Latin-1, the range of the standard PDF fonts.
"""

from __future__ import annotations

Block = tuple[str, object]

WARRANTY_POLICY: list[Block] = [
    ("title", "Veltrana Hearth Limited Warranty"),
    (
        "p",
        "This warranty is given by Veltrana Energy to the owner of a Veltrana Hearth home battery "
        "system installed by a certified Veltrana installer. It applies in addition to the rights "
        "that consumer law already gives you, and it does not limit them.",
    ),
    ("h", "1. What the warranty covers"),
    (
        "p",
        "Veltrana warrants that each part listed in the table below is free from defects in "
        "materials and workmanship for the period shown, counted from the date of installation "
        "recorded when the installer commissions the system. For the Hearth HB-10 battery module, "
        "Veltrana also warrants the remaining usable capacity, as described in section 2.",
    ),
    (
        "table",
        [
            ["Component", "Warranty period", "What is covered", "Limit"],
            [
                "Hearth HB-10 battery module",
                "10 years",
                "Defects in materials and workmanship; usable capacity below the guaranteed level",
                "36 MWh of energy delivered per module",
            ],
            [
                "Hearth Gateway HG-1",
                "5 years",
                "Defects in materials and workmanship",
                "None",
            ],
            [
                "Current sensors and cables supplied by Veltrana",
                "5 years",
                "Defects in materials and workmanship",
                "None",
            ],
            [
                "Installation workmanship",
                "At least 2 years",
                "Given by your installer, not by Veltrana",
                "Set by the installer",
            ],
            [
                "Firmware and the Veltrana Home app",
                "As long as the module warranty",
                "Free updates and security fixes",
                "None",
            ],
        ],
    ),
    (
        "p",
        "The battery module warranty ends after 10 years or once the module has delivered 36 MWh "
        "of energy, whichever comes first. The gateway records the energy each module delivers, and "
        "the total is shown in the app under Settings > System > Battery details.",
    ),
    ("h", "2. Guaranteed capacity"),
    (
        "p",
        "A battery slowly loses capacity as it ages. Veltrana guarantees that each HB-10 module "
        "keeps at least the share of its original 10.2 kWh usable capacity shown below, measured by "
        "the system's built-in capacity test at an ambient temperature of 25 °C.",
    ),
    (
        "table",
        [
            ["End of year", "Guaranteed share of capacity", "Guaranteed usable energy"],
            ["1", "95%", "9.69 kWh"],
            ["3", "88%", "8.98 kWh"],
            ["5", "82%", "8.36 kWh"],
            ["10", "70%", "7.14 kWh"],
        ],
    ),
    (
        "p",
        "If a capacity test shows less than the guaranteed level, Veltrana repairs or replaces the "
        "module. Because the capacity is verified from the data the gateway sends, Veltrana may "
        "decline a capacity claim when the gateway has been offline for more than 90 days in a row, "
        "as the module's history cannot then be checked.",
    ),
    ("h", "3. Registering your system"),
    (
        "p",
        "Your installer registers the system when commissioning it. If you install the Veltrana Home "
        "app and accept the system into your account within 60 days of installation, the full "
        "warranty periods apply. If the system is not registered within 60 days, the battery module "
        "warranty is limited to 5 years; all other terms stay the same.",
    ),
    ("h", "4. What the warranty does not cover"),
    (
        "bullet",
        "Systems installed, moved, opened or repaired by anyone other than a certified installer.",
    ),
    ("bullet", "Damage from flooding, fire, lightning, pests, or a power surge from the grid."),
    (
        "bullet",
        "Operation outside the permitted ambient temperature range of -10 °C to 50 °C, or in a "
        "location that the installation guide does not allow.",
    ),
    (
        "bullet",
        "Damage from deep discharge while a module was stored uninstalled, as explained in the "
        "Safety and Storage Notice.",
    ),
    ("bullet", "Scratches, dents and discolouration that do not affect how the system works."),
    (
        "bullet",
        "Loss of capacity within the guaranteed levels of section 2, which is normal ageing and not "
        "a defect.",
    ),
    ("h", "5. Making a claim"),
    (
        "p",
        "Contact Veltrana support through Help > Contact support in the app, or by phone. Have the "
        "serial number of the gateway ready; it starts with HG1. Support runs a remote diagnosis "
        "and answers every claim within 5 working days. If the claim is accepted, Veltrana chooses "
        "whether to repair the part, replace it with a new or refurbished part of equal or better "
        "performance, or, if neither is possible, refund the part's depreciated value. Veltrana pays "
        "for the replacement parts, shipping and the installer's labour for accepted claims.",
    ),
    (
        "p",
        "A repaired or replacement battery module is covered for the rest of the original "
        "warranty period; a replacement gateway is covered for 5 years or for the rest of the "
        "original period, whichever is longer. The warranty stays with the system when the home is sold, and passes to the new owner "
        "without any paperwork.",
    ),
]

INSTALLER_GUIDE: list[Block] = [
    ("title", "Veltrana Hearth Installer Guide"),
    (
        "p",
        "This guide is for certified Veltrana installers. Only installers who have completed the "
        "one-day Veltrana Certified Installer course may install a Hearth system, and the "
        "certification must be renewed every 2 years. Installations by anyone else are not covered "
        "by the Veltrana warranty.",
    ),
    ("h", "Choosing the location"),
    (
        "p",
        "The battery modules and the Hearth Gateway may be installed indoors or outdoors. Outdoor "
        "sites must be sheltered from direct rain and from afternoon sun, because heat shortens cell "
        "life. The enclosure is rated IP55. The site must stay within an ambient temperature of "
        "-10 °C to 50 °C and a relative humidity of at most 95% without condensation, at an altitude "
        "of no more than 3,000 metres. Never install a module in a bedroom, a living room, a loft, or "
        "an escape route.",
    ),
    ("p", "Keep the following clearances around the battery stack:"),
    (
        "table",
        [
            ["Direction", "Minimum clearance", "Reason"],
            ["Above the top module", "300 mm", "Warm air leaves through the top vents"],
            ["Left and right sides", "150 mm", "Side air intake"],
            ["In front", "600 mm", "Room to open the cover for service"],
            ["Between stacked modules", "20 mm", "Set by the mounting brackets"],
            ["Gas meter, boiler flue or open flame", "1 m", "Fire safety"],
        ],
    ),
    ("h", "Mounting"),
    (
        "p",
        "One or two modules can hang on a wall that carries at least 300 kg, using the wall brackets "
        "supplied. Each HB-10 module weighs 92 kg. A stack of three modules weighs 276 kg and must "
        "stand on the Veltrana floor stand, fixed to the wall with the anti-tip strap. The gateway "
        "weighs 14 kg and is mounted on the wall beside the stack, no more than 2 metres away, "
        "because the supplied DC battery cable is 2 metres long. Two people are needed to lift a "
        "module.",
    ),
    ("h", "Electrical connection"),
    (
        "table",
        [
            ["Item", "Requirement"],
            ["Grid connection", "230 V single-phase, 50 Hz"],
            ["AC circuit breaker", "40 A, type B, with a 30 mA type A residual current device"],
            ["AC cable", "10 mm² copper for runs up to 25 m"],
            ["Solar inputs", "2 trackers, 120 V to 500 V DC, at most 13 A per tracker"],
            ["Solar array size", "At most 8 kW of panels in total"],
            ["Data connection", "Ethernet (preferred) or 2.4 GHz Wi-Fi"],
        ],
    ),
    (
        "p",
        "Circuits that must keep running during a power cut are moved to the backup panel fed by "
        "the gateway. The gateway supplies at most 7.6 kW continuously in backup, so leave large "
        "loads such as heat pumps and electric car chargers on the main panel unless the owner "
        "accepts that they may trip the backup supply.",
    ),
    ("h", "Commissioning"),
    (
        "p",
        "Commission every system with the Veltrana Pro installer app. The steps below take about "
        "30 minutes:",
    ),
    ("bullet", "Scan the serial number of the gateway and of every battery module."),
    ("bullet", "Select the grid code required by the local grid operator."),
    (
        "bullet",
        "Set the grid export limit, between 0 and 10 kW, if the grid operator requires one.",
    ),
    ("bullet", "Mark which circuits are on the backup panel."),
    (
        "bullet",
        "Run the backup test: switch off the main breaker and check that the gateway switches the "
        "backup circuits to the battery in less than 30 milliseconds, then switch the breaker back on.",
    ),
    ("bullet", "Hand the system over to the owner and help them add it to the Veltrana Home app."),
    (
        "p",
        "A system with three modules needs a gateway of hardware revision C or later and firmware "
        "3.3.0 or later. The hardware revision is printed on the gateway label after the serial "
        "number. When adding a module to an existing system, the new module must be installed "
        "within three years of the first module's installation date.",
    ),
]

OWNER_MANUAL: list[list[Block]] = [
    [
        ("title", "Veltrana Hearth Owner's Manual"),
        ("h", "1. How your system works"),
        (
            "p",
            "The Veltrana Hearth system stores electricity so that you can use it when you need it. "
            "Its Hearth HB-10 battery modules hold 10.2 kWh of usable energy each, and a system has "
            "one, two or three of them. The Hearth Gateway HG-1 sits between your home, your solar "
            "panels, the battery and the public grid. Every few seconds it measures how much power "
            "your panels produce and how much your home uses, and decides where the energy goes.",
        ),
        (
            "p",
            "In the default Self-Powered mode the gateway follows a fixed order of priorities. Solar "
            "energy first supplies the appliances running in your home. Any surplus charges the "
            "battery. Only when the battery is full is the remaining surplus exported to the grid. "
            "In the evening, when the panels stop producing, the battery supplies your home until it "
            "reaches the backup reserve, and only then does your home draw from the grid again.",
        ),
        (
            "p",
            "When the public grid fails, the gateway disconnects your home from it in less than 30 "
            "milliseconds and runs the circuits on the backup panel from the battery. During a power "
            "cut the backup reserve is released, so the whole stored energy is available. Solar "
            "panels keep charging the battery while the grid is down. When the grid returns and has "
            "been stable for 5 minutes, the gateway reconnects automatically.",
        ),
        (
            "p",
            "The battery uses lithium iron phosphate (LFP) cells. They tolerate daily full cycles "
            "well, do not contain cobalt, and are much less prone to overheating than other "
            "lithium-ion chemistries.",
        ),
    ],
    [
        ("h", "2. Operating modes"),
        (
            "p",
            "Self-Powered is the right mode for most homes with solar panels. It maximises the share "
            "of your own solar energy that you use yourself.",
        ),
        (
            "p",
            "Time-Based Control is for homes on a time-of-use tariff. You enter your peak and "
            "off-peak hours in the app, and the battery charges from the grid during off-peak hours "
            "and supplies your home during peak hours. Since firmware 3.4.0 the system can also "
            "follow a dynamic tariff with hourly prices published a day ahead, where your supplier "
            "supports it.",
        ),
        (
            "p",
            "Backup Only keeps the battery full and uses it only during a power cut. Choose it if "
            "protection against outages matters more to you than saving on your bill.",
        ),
        (
            "p",
            "Storm Watch is not a mode of its own but an add-on that works with any mode. When a "
            "severe weather alert is issued for your area, the battery charges to 100%, from the "
            "grid if the sun is not enough, so that it is full if the power goes out. Since firmware "
            "3.4.1 it can start up to 48 hours before the alert takes effect.",
        ),
        ("h", "The backup reserve"),
        (
            "p",
            "Outside a power cut the battery never discharges below the backup reserve. The reserve "
            "is 20% by default, and you can set it from 0% to 100% in steps of 5% in the app under "
            "Modes > Backup reserve. A higher reserve means more energy for an outage but less for "
            "everyday savings. Setting the reserve to 100% has the same effect as Backup Only mode.",
        ),
        (
            "p",
            "In hot weather, when the outdoor temperature forecast is above 35 °C, the system "
            "charges the battery to 95% instead of 100% to slow cell ageing, except in Backup Only "
            "mode and while Storm Watch is active.",
        ),
    ],
    [
        ("h", "3. The Veltrana Home app"),
        (
            "p",
            "The Home screen shows the energy flowing between your solar panels, the battery, your "
            "home and the grid, updated every 5 seconds. The History screen shows your production, "
            "consumption and savings per day, month and year. The Battery screen shows the state of "
            "charge and the state of health, which is the share of the battery's original capacity "
            "that remains.",
        ),
        (
            "p",
            "The app sends a notification when the grid fails and when it returns, when a firmware "
            "update is ready, and when the system shows an error or warning code. The meaning of "
            "each code is listed in the Troubleshooting FAQ.",
        ),
        ("h", "The status ring"),
        (
            "p",
            "The ring of light on the front of the gateway shows the state of the system at a glance:",
        ),
        (
            "table",
            [
                ["Ring", "Meaning"],
                ["Steady white", "The system is starting"],
                ["Steady green", "Normal operation"],
                ["Pulsing green", "A firmware update is being installed"],
                ["Steady blue", "Power cut: the home is running on the battery"],
                ["Blinking amber", "Warning: check the app for a W code"],
                ["Blinking red", "Error: check the app for an E code"],
            ],
        ),
        (
            "p",
            "You can dim the ring or switch it off at night in the app under Settings > Gateway > "
            "Status ring. A blinking red ring is always shown, whatever the setting.",
        ),
    ],
    [
        ("h", "4. Care and maintenance"),
        (
            "p",
            "The Hearth system needs very little care. Every 6 months, check that nothing blocks the "
            "vents on the top and sides of the modules, and remove dust and cobwebs from the vents "
            "with a soft dry brush. Never clean a module with a water jet or a pressure washer, and "
            "never spray cleaning products into the vents. Keep the clearances around the stack free "
            "of stored boxes, bicycles and garden tools.",
        ),
        (
            "p",
            "Once a year the system runs a capacity self-test, which takes about 24 hours and "
            "happens automatically on a day with little expected solar production. You can also "
            "start the test yourself from Battery > Capacity test. The result updates the state of "
            "health shown in the app and is the measurement used for capacity warranty claims.",
        ),
        ("h", "What affects battery life"),
        (
            "p",
            "Heat is the main cause of faster ageing. A module kept at 35 °C loses capacity about "
            "twice as fast as one kept at 20 °C. Deep discharges and very high charge levels matter "
            "much less for LFP cells, which is why the system may use the full range every day. A "
            "module is expected to keep at least 70% of its capacity after 10 years of daily use, "
            "which is the level guaranteed by the warranty.",
        ),
        ("h", "Moving house or removing the system"),
        (
            "p",
            "Only a certified installer may remove or move the system. When a module reaches the end "
            "of its life it can be returned free of charge through the Second Life recycling "
            "programme; see Returns, Replacements and Recycling.",
        ),
    ],
    [
        ("h", "5. Living through a power cut"),
        (
            "p",
            "When the grid fails, the status ring turns steady blue and the app sends a "
            "notification. Only the circuits that your installer connected to the backup panel keep "
            "running; typical choices are the refrigerator and freezer, lights, the router, the "
            "boiler controls and some sockets. Large loads such as heat pumps, electric ovens and "
            "car chargers are usually left off the backup panel.",
        ),
        (
            "p",
            "The gateway supplies up to 7.6 kW continuously in backup, or 5 kW with a single module, "
            "and up to 11 kW for 10 seconds to start motors such as a well pump. If your appliances "
            "together ask for more, the backup supply switches off to protect the system and tries "
            "again after 30 seconds. Switch off a few appliances before it retries.",
        ),
        (
            "p",
            "To make the stored energy last, avoid running the washing machine, dryer or dishwasher "
            "during a long outage, and keep the refrigerator and freezer doors closed. The app shows "
            "the estimated time the battery can keep going at the present load.",
        ),
        (
            "p",
            "If the battery runs empty during an outage, the backup circuits go dark until the sun "
            "or the grid returns. On a sunny day the solar panels restart the system by themselves "
            "once they produce enough power; this is called a solar black start and needs no action "
            "from you.",
        ),
    ],
    [
        ("h", "6. Getting help"),
        (
            "p",
            "First look up any code shown in the app in the Troubleshooting FAQ. Many warnings clear "
            "themselves, and the FAQ says when to call your installer and when to call Veltrana "
            "support.",
        ),
        (
            "p",
            "Call your installer for anything to do with the wiring, the location of the system, or "
            "adding modules. Contact Veltrana support for faults, error codes that do not clear, and "
            "warranty questions. Support can be reached through Help > Contact support in the app, "
            "which attaches your system's diagnostic report, or by phone on weekdays from 8:00 to "
            "18:00.",
        ),
        ("h", "Glossary"),
        (
            "table",
            [
                ["Term", "Meaning"],
                ["kWh", "Kilowatt-hour, a quantity of energy"],
                ["kW", "Kilowatt, a rate of power"],
                ["State of charge", "How full the battery is now, in percent"],
                ["State of health", "The share of the original capacity that remains"],
                ["Backup reserve", "The charge kept for power cuts"],
                ["Round-trip efficiency", "The share of charged energy that comes back out"],
                ["MPPT", "A solar input that finds the best operating point of the panels"],
            ],
        ),
    ],
]

TECHNICAL_SPECIFICATIONS: list[list[Block]] = [
    [
        ("title", "Veltrana Hearth Technical Specifications"),
        (
            "p",
            "Specifications of the Hearth HB-10 battery module, the Hearth Gateway HG-1 and complete "
            "systems, valid for hardware revision C and firmware 3.4 or later.",
        ),
        ("h", "Hearth HB-10 battery module"),
        (
            "table",
            [
                ["Property", "Value"],
                ["Usable energy", "10.2 kWh"],
                ["Nominal energy", "10.8 kWh"],
                ["Cell chemistry", "Lithium iron phosphate (LFP)"],
                ["Nominal voltage", "51.2 V DC"],
                ["Continuous power per module", "5 kW"],
                ["Peak power per module (10 seconds)", "7.5 kW"],
                ["Round-trip efficiency", "90%"],
                ["Expected cycle life", "6,000 full cycles to 70% capacity"],
                ["Dimensions (W x H x D)", "620 x 1020 x 210 mm"],
                ["Weight", "92 kg"],
                ["Enclosure rating", "IP55"],
                ["Operating temperature", "-10 °C to 50 °C"],
                ["Charging temperature", "0 °C to 45 °C (built-in cell heater)"],
                ["Noise at 1 m", "At most 30 dB(A)"],
            ],
        ),
    ],
    [
        ("h", "Hearth Gateway HG-1"),
        (
            "table",
            [
                ["Property", "Value"],
                ["Grid connection", "230 V single-phase, 50 Hz"],
                ["Continuous output (all systems)", "7.6 kW"],
                ["Peak output (10 seconds)", "11 kW"],
                ["Backup switchover time", "Less than 30 ms"],
                ["Solar inputs", "2 MPPT trackers"],
                ["Solar input voltage range", "120 V to 500 V DC"],
                ["Maximum current per tracker", "13 A"],
                ["Maximum solar array", "8 kW"],
                ["Grid export limit", "Adjustable from 0 to 10 kW"],
                ["Communication", "Ethernet, 2.4 GHz Wi-Fi, RS-485 to battery modules"],
                ["Dimensions (W x H x D)", "400 x 500 x 150 mm"],
                ["Weight", "14 kg"],
            ],
        ),
        (
            "p",
            "The continuous output of a one-module system is limited by the module to 5 kW. Systems "
            "with two or three modules are limited by the gateway to 7.6 kW.",
        ),
    ],
    [
        ("h", "System configurations"),
        (
            "table",
            [
                ["Modules", "Usable energy", "Continuous power", "Backup time at 500 W"],
                ["1", "10.2 kWh", "5 kW", "About 20 hours"],
                ["2", "20.4 kWh", "7.6 kW", "About 41 hours"],
                ["3", "30.6 kWh", "7.6 kW", "About 61 hours"],
            ],
        ),
        (
            "p",
            "Backup times assume a full battery at the start of the power cut, a constant load of "
            "500 W and no solar production. A third module requires gateway hardware revision C or "
            "later.",
        ),
        ("h", "Certifications"),
        (
            "p",
            "The battery module is tested to IEC 62619 for the safety of industrial lithium "
            "batteries and to UN 38.3 for transport. The gateway is tested to IEC 62109-1 for the "
            "safety of power converters and meets the grid connection rules of the countries where "
            "it is sold. The product is CE marked.",
        ),
        (
            "p",
            "Specifications may change without notice as the product is improved. The values in "
            "this document were measured at 25 °C.",
        ),
    ],
]

DOCX_FILES: dict[str, list[Block]] = {
    "warranty_policy.docx": WARRANTY_POLICY,
    "installer_guide.docx": INSTALLER_GUIDE,
}

PDF_FILES: dict[str, list[list[Block]]] = {
    "owner_manual.pdf": OWNER_MANUAL,
    "technical_specifications.pdf": TECHNICAL_SPECIFICATIONS,
}


def pdf_footer(name: str, number: int, total: int) -> str:
    """The line printed at the foot of each PDF page."""
    title = {
        "owner_manual.pdf": "Owner's Manual",
        "technical_specifications.pdf": "Technical Specifications",
    }
    return f"Veltrana Hearth {title[name]} - page {number} of {total}"
